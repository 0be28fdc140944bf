"""Variants against their case: the two-sided exact test, its own Holm family, and what a simulation shows."""

from __future__ import annotations

import random

import pytest
from scipy.stats import beta, fisher_exact

from stabilitygate.judge.variants import MeasuredVariant, agreement_on, compare_variants, two_sided_p
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount

ALPHA = 0.05


def measurement(answers: dict[str, int], *, tokens: int | None = None) -> CaseMeasurement:
    n = sum(answers.values())
    rows = tuple(AnswerCount(a, c) for a, c in sorted(answers.items(), key=lambda kv: (-kv[1], kv[0])))
    return CaseMeasurement(
        id="c@v",
        samples_requested=n,
        samples_ok=n,
        sample_errors=0,
        metrics=Metrics(
            unique_completions=len(answers),
            parsed_agreement=rows[0].count / n,
            prompt_tokens=tokens,
            completion_tokens=tokens,
        ),
        completions=tuple(CompletionCount(str(r.answer), r.count) for r in rows),
        answers=rows,
    )


def variant(case_id: str, name: str, answers: dict[str, int], error: str | None = None) -> MeasuredVariant:
    m = measurement(answers, tokens=5)
    return MeasuredVariant(case_id, name, ("params",), m.samples_requested, m, error)


def test_the_two_sided_p_is_twice_the_smaller_one_sided_fisher() -> None:
    own, better = Agreement("parsed_agreement", 6, 10), Agreement("parsed_agreement", 10, 10)
    one_sided = fisher_exact([[10, 6], [0, 4]], alternative="greater").pvalue
    assert two_sided_p(own, better) == pytest.approx(2 * one_sided, abs=1e-9)
    assert two_sided_p(own, better) == pytest.approx(2 * 210 / 4845, abs=1e-9)  # the design's 0.043, doubled
    assert two_sided_p(better, own) == two_sided_p(own, better)  # symmetric
    assert two_sided_p(own, own) == 1.0


def test_agreement_is_counted_on_the_cases_own_metric() -> None:
    m = measurement({"A": 7, "B": 3})
    assert agreement_on("parsed_agreement", m) == Agreement("parsed_agreement", 7, 10)
    assert agreement_on("mode_share", m) == Agreement("mode_share", 7, 10)
    assert agreement_on("semantic_agreement", m) is None  # no semantic layer there
    assert agreement_on("parsed_agreement", CaseMeasurement.nothing("c", 10)) is None


def test_the_family_is_the_variants_own_and_leaves_out_what_cannot_reject() -> None:
    own = {"a": Agreement("parsed_agreement", 12, 20), "b": Agreement("parsed_agreement", 20, 20)}
    variants = [
        variant("a", "strict", {"A": 20}),
        variant("a", "seeded", {"A": 12, "B": 8}),
        variant("b", "strict", {"A": 20}),  # 20/20 against 20/20: no variation, cannot reject
        variant("b", "broken", {"A": 1, "B": 1}, error="unreachable"),
    ]
    found = compare_variants(own, variants, ALPHA)
    (strict_a, seeded_a), (strict_b, broken_b) = found["a"], found["b"]
    raw = two_sided_p(own["a"], Agreement("parsed_agreement", 20, 20))
    assert strict_a.p_value == raw and strict_a.p_holm == pytest.approx(2 * raw)  # two tests in the family
    assert strict_a.significant and strict_a.change == "better" and strict_a.tokens == 10
    assert seeded_a.change == "same" and not seeded_a.significant and seeded_a.p_holm == 1.0
    assert strict_b.p_value == 1.0 and strict_b.p_holm is None and not strict_b.significant
    assert broken_b.error == "unreachable" and broken_b.p_value is None and broken_b.change is None
    assert broken_b.samples_ok == 2  # what it did measure is still shown


def test_a_variant_never_measured_shows_its_error_alone() -> None:
    lost = MeasuredVariant("a", "keyless", ("provider",), 10, None, "the variable K is not set")
    (row,) = compare_variants({"a": Agreement("parsed_agreement", 5, 10)}, [lost], ALPHA)["a"]
    assert (row.error, row.samples_ok, row.samples_requested, row.primary) == ("the variable K is not set", 0, 10, None)


def _draws(rng: random.Random, rate: float, n: int) -> dict[str, int]:
    hits = sum(rng.random() < rate for _ in range(n))
    return {"A": hits, "B": n - hits} if hits < n else {"A": n}


def _own(answers: dict[str, int]) -> Agreement:
    n = sum(answers.values())
    return Agreement("parsed_agreement", max(answers.values()), n)


def upper_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    return 1.0 if failures == trials else float(beta.ppf(confidence, failures + 1, trials - failures))


def lower_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    return 0.0 if failures == 0 else float(beta.ppf(1 - confidence, failures, trials - failures + 1))


@pytest.mark.parametrize(("rate", "n"), [(0.6, 10), (0.6, 20), (0.9, 20), (0.75, 30)])
def test_variants_that_change_nothing_are_called_significant_at_most_alpha_of_the_time(rate: float, n: int) -> None:
    """Seeded: three variants drawn from the case's own distribution, 300 runs per regime. The run's
    chance of calling any of them significant stays at or below alpha (the 95% lower bound must)."""
    rng = random.Random(f"variants-{rate}-{n}")
    runs, flagged = 300, 0
    for _ in range(runs):
        own = _draws(rng, rate, n)
        variants = [variant("c", f"v{i}", _draws(rng, rate, n)) for i in range(3)]
        found = compare_variants({"c": _own(own)}, variants, ALPHA)["c"]
        flagged += any(v.significant for v in found)
    assert lower_bound(flagged, runs) <= ALPHA, flagged


def test_a_variant_that_does_fix_the_case_is_found() -> None:
    """Seeded: a case agreeing 50% of the time and a variant agreeing always, N = 20, among two that change nothing."""
    rng = random.Random("variants-power")
    runs, found_it = 200, 0
    for _ in range(runs):
        own = _draws(rng, 0.5, 20)
        variants = [variant("c", "fix", {"A": 20}), *(variant("c", f"same{i}", _draws(rng, 0.5, 20)) for i in range(2))]
        fix = compare_variants({"c": _own(own)}, variants, ALPHA)["c"][0]
        found_it += fix.significant and fix.change == "better"
    assert upper_bound(found_it, runs) >= 0.9 and found_it / runs >= 0.9, found_it
