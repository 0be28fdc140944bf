"""Thresholds against the noise: the exact chance that an unchanged run fails a threshold, and the value that holds."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import BaselineCase, baseline_entry
from stabilitygate.judge.threshold_noise import chance_all_below, noisy_thresholds
from stabilitygate.judge.thresholds import check_thresholds, measurement_error
from stabilitygate.measure.case import measure_case
from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds

LABELS = ["A", "B", "C", "D"]


def case(samples: int = 12, *, expected: Any = None, **thresholds: Any) -> ResolvedCase:
    return ResolvedCase(
        id="c",
        line=3,
        messages=(Message(role="user", content="Pick one."),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(**thresholds),
        answer=AnswerSpec(choice=LABELS),
        expected=expected,
        samples=samples,
    )


def texts(counts: dict[str | None, int]) -> list[str | None]:
    """Completions: a label's count answers it, "?" completions name none (parse failures), None fails."""
    return [text for text, count in counts.items() for _ in range(count)]


def measured(c: ResolvedCase, completions: Sequence[str | None]) -> Any:
    samples = [
        Sample("c", i, text, error=None if text is not None else "HTTP 500") for i, text in enumerate(completions)
    ]
    return measure_case(c, samples, embedder=None, samples_requested=len(samples))


def recorded(c: ResolvedCase, completions: Sequence[str | None]) -> BaselineCase:
    """The baseline entry a recording of these completions writes, through the real measuring code."""
    m = measured(c, completions)
    return baseline_entry(c, m, primary_agreement(c, m))


# --- the exact chance -------------------------------------------------------------------------------


def brute_force(n: int, rates: Sequence[float], t: int) -> float:
    """P(every count < t) summed over every multinomial outcome."""
    rest = 1 - sum(rates)
    total = 0.0
    for counts in itertools.product(range(n + 1), repeat=len(rates)):
        if sum(counts) > n or max(counts, default=0) >= t:
            continue
        free = n - sum(counts)
        ways = math.factorial(n) // math.prod(math.factorial(x) for x in (*counts, free))
        total += ways * math.prod(r**x for r, x in zip(rates, counts, strict=True)) * rest**free
    return total


@pytest.mark.parametrize("n", [1, 5, 12, 40])
@pytest.mark.parametrize("rate", [0.0, 0.05, 0.5, 2 / 3, 0.97, 1.0])
def test_one_category_is_the_binomial(n: int, rate: float) -> None:
    for t in range(n + 2):
        assert chance_all_below(n, [rate], t) == pytest.approx(binom.cdf(t - 1, n, rate), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "rates"), [(6, [0.5, 0.5]), (9, [0.4, 0.3, 0.2]), (10, [0.6, 0.25]), (7, [0.3, 0.3, 0.2, 0.1])]
)
def test_several_categories_are_the_multinomial(n: int, rates: list[float]) -> None:
    for t in range(n + 2):
        assert chance_all_below(n, rates, t) == pytest.approx(brute_force(n, rates, t), abs=1e-12)


def test_large_runs_go_through_the_fft_alike() -> None:
    exact = binom.cdf(2_899, 5_000, 0.6)
    assert chance_all_below(5_000, [0.6], 2_900) == pytest.approx(exact, abs=1e-9)


# --- which thresholds are flagged, with what ---------------------------------------------------------


def test_the_issue_example_min_agreement_against_40_of_60() -> None:
    c = case(samples=12, min_agreement=0.6)
    entry = recorded(c, texts({"A": 40, "B": 20}))
    (noisy,) = noisy_thresholds(c, entry, alpha=0.05)
    # 8 of 12 meets 0.60. A run fails when neither answer reaches 8: A alone below 8 is the binomial's
    # 37%, less the runs in which B reaches 8 instead.
    exact = brute_force(12, [2 / 3, 1 / 3], 8)
    assert exact < binom.cdf(7, 12, 2 / 3) and noisy.fail_chance == pytest.approx(exact, abs=1e-12)
    # 0.50 needs 6 of 12, which one of two answers always has; 0.51 needs 7: both at 6 fails, 11% of runs.
    assert noisy.holds == 0.5 and brute_force(12, [2 / 3, 1 / 3], 7) == pytest.approx(0.1113, abs=1e-4)
    assert noisy.sentence() == (
        f"min_agreement 0.60 against a baseline of 40/60: an unchanged run of 12 fails it {exact:.0%} of the time; "
        "0.50 holds at alpha 0.05"
    )


def test_two_answers_half_and_half_never_fail_a_half() -> None:
    # The most common of two answers always holds half: a binomial of one answer alone would say 41%.
    c = case(samples=20, min_agreement=0.5)
    assert noisy_thresholds(c, recorded(c, texts({"A": 10, "B": 10})), alpha=0.05) == []


def test_a_parser_that_matches_half_the_time_is_flagged_at_the_default() -> None:
    c = case(samples=20)
    entry = recorded(c, texts({"A": 11, "?": 9}))
    (noisy,) = noisy_thresholds(c, entry, alpha=0.05)
    assert (noisy.threshold, noisy.limit, noisy.baseline_k, noisy.baseline_n) == ("min_parsed", 0.5, 11, 20)
    assert noisy.fail_chance == pytest.approx(binom.cdf(9, 20, 0.55), abs=1e-12)
    assert "11/20 parsed" in noisy.sentence()


def test_accuracy_and_errors_are_flagged_with_their_counts() -> None:
    c = case(samples=20, expected="A", min_accuracy=0.9, max_sample_errors=1)
    entry = recorded(c, texts({"A": 85, "B": 10, None: 5}))
    flagged = {n.threshold: n for n in noisy_thresholds(c, entry, alpha=0.05)}
    assert set(flagged) == {"min_accuracy", "max_sample_errors"}
    accuracy, errors = flagged["min_accuracy"], flagged["max_sample_errors"]
    assert (accuracy.baseline_k, accuracy.baseline_n) == (85, 95)
    assert accuracy.fail_chance == pytest.approx(binom.cdf(17, 20, 85 / 95), abs=1e-12)
    assert (errors.baseline_k, errors.baseline_n, errors.limit) == (5, 100, 1)
    assert errors.fail_chance == pytest.approx(binom.sf(1, 20, 0.05), abs=1e-12)
    assert errors.holds == 3 and binom.sf(3, 20, 0.05) <= 0.05 < binom.sf(2, 20, 0.05)
    assert errors.sentence().startswith("max_sample_errors 1 against a baseline of 5/100 failed samples: ")


def test_thresholds_with_room_are_not_flagged() -> None:
    c = case(samples=20, min_agreement=0.7, min_mode_share=0.7, expected="A", min_accuracy=0.7)
    assert noisy_thresholds(c, recorded(c, texts({"A": 98, "B": 2})), alpha=0.05) == []


def test_the_value_offered_is_the_loosest_that_holds() -> None:
    for k, n, samples, limit in [(40, 60, 12, 0.6), (18, 20, 20, 0.95), (70, 100, 30, 0.7), (9, 10, 10, 0.9)]:
        c = case(samples=samples, min_agreement=limit)
        (noisy,) = noisy_thresholds(c, recorded(c, texts({"A": k, "B": n - k})), alpha=0.05)
        at = {v: noisy_thresholds(case(samples=samples, min_agreement=v), recorded(c, texts({"A": k, "B": n - k})),
                                  alpha=0.05) for v in (noisy.holds, round(noisy.holds + 0.01, 2))}  # fmt: skip
        assert at[noisy.holds] == [] and at[round(noisy.holds + 0.01, 2)] != []


# --- the chance is what the judge does: seeded simulation -------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "thresholds"),
    [
        ({"A": 40, "B": 20}, {"min_agreement": 0.6}),
        ({"A": 11, "?": 9}, {}),  # the default min_parsed
        ({"A": 6, "B": 5, "C": 4, "?": 5}, {"min_agreement": 0.35, "min_mode_share": 0.35}),
        ({"A": 17, "B": 3}, {"min_accuracy": 0.9}),
        ({"A": 15, None: 5}, {"max_sample_errors": 3}),
    ],
)
def test_unchanged_runs_fail_as_often_as_computed(baseline: dict[str | None, int], thresholds: dict[str, Any]) -> None:
    """Runs drawn from the baseline's own answers, judged by the real threshold checks: the share that
    fails matches the exact chance (within a 99.9% band over 2,000 runs)."""
    rng = np.random.default_rng(26)
    c = case(samples=12, expected="A" if "min_accuracy" in thresholds else None, **thresholds)
    entry = recorded(c, texts(baseline))
    flagged = noisy_thresholds(c, entry, alpha=0.0)  # alpha 0: every threshold that can fail, with its chance
    assert flagged, "each regime has a threshold inside the noise"
    pool = texts(baseline)
    runs, fails = 2_000, {n.threshold: 0 for n in flagged}
    for _ in range(runs):
        drawn = [pool[i] for i in rng.integers(len(pool), size=12)]
        m = measured(c, drawn)
        violations = " ".join(check_thresholds(c, m, primary_agreement(c, m)).violations)
        error = measurement_error(c, m) or ""
        for name in fails:
            fails[name] += (
                ("samples failed" in error) if name == "max_sample_errors" else (f"below {name}" in violations)
            )
    for noisy in flagged:
        p, share = noisy.fail_chance, fails[noisy.threshold] / runs
        band = 3.3 * math.sqrt(p * (1 - p) / runs) + 1e-9
        assert abs(share - p) <= band, (noisy.threshold, share, p)
