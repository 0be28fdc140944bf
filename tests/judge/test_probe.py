"""The concurrency probe's test: the halves read back by index, its own Holm family, a seeded simulation."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from scipy.stats import beta

from stabilitygate.judge.probe import half_of, probe_results, probed_cases
from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds

ALPHA = 0.05


def case(case_id: str = "c", samples: int = 10, answer: AnswerSpec | None = None) -> ResolvedCase:
    return ResolvedCase(
        id=case_id,
        line=None,
        messages=(Message(role="user", content="p"),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(),
        answer=answer,
        expected=None,
        samples=samples,
    )


def samples(case_id: str, texts: Sequence[str | None]) -> list[Sample]:
    return [
        Sample(case=case_id, index=i, text=t, error=None if t is not None else "timeout: no reply")
        for i, t in enumerate(texts)
    ]


def test_the_first_half_is_alone_the_second_under_load() -> None:
    drawn = samples("c", ["42"] * 5 + ["42.", "forty-two", "42!", "The answer is 42", "42."])
    (found,) = probe_results([case()], drawn, alpha=ALPHA).values()
    assert (found.alone, found.alone_distinct, found.under_load, found.under_load_distinct) == (5, 1, 5, 4)
    assert (found.modal_alone, found.modal_under_load, found.compared) == (5, 0, "completions")
    assert found.p_value == found.p_holm and found.p_value is not None and found.p_value < 0.01
    assert found.depends


def test_parsed_answers_are_compared_with_a_parser_and_failed_parses_are_counted_apart() -> None:
    letter = case(answer=AnswerSpec(choice=["A", "B"]))
    drawn = samples("c", ["A", "The answer is A.", "(a)", "A", "A", "A", "B", "no idea", None, "A"])
    (found,) = probe_results([letter], drawn, alpha=ALPHA).values()
    assert found.compared == "answers"
    assert (found.alone, found.alone_distinct, found.alone_unparsed) == (5, 1, 0)  # three spellings of one answer
    assert (found.under_load, found.under_load_distinct, found.modal_under_load) == (4, 2, 2)  # A and B
    assert found.under_load_unparsed == 1 and not found.nothing_parsed  # "no idea" is no answer, said apart
    assert not found.depends


def test_a_case_none_of_whose_answers_parsed_compared_nothing() -> None:
    letter = case(answer=AnswerSpec(choice=["A", "B"]))
    (found,) = probe_results([letter], samples("c", ["no idea"] * 10), alpha=ALPHA).values()
    assert (found.alone_distinct, found.under_load_distinct) == (0, 0)  # not "5 distinct answers in 5"
    assert (found.alone_unparsed, found.under_load_unparsed) == (5, 5) and found.nothing_parsed
    assert found.p_value is None and not found.depends


def test_nothing_to_test_when_both_halves_hold_one_answer() -> None:
    (found,) = probe_results([case()], samples("c", ["42"] * 10), alpha=ALPHA).values()
    assert found.p_value is None and found.p_holm is None and not found.depends


def test_the_probes_of_a_run_are_one_holm_family() -> None:
    depends = ["42"] * 5 + ["x", "y", "z", "w", "v"]
    cases = [case("a"), case("b"), case("c")]
    drawn = samples("a", depends) + samples("b", depends) + samples("c", ["42"] * 10)
    found = probe_results(cases, drawn, alpha=ALPHA)
    raw = found["a"].p_value
    assert raw is not None and found["a"].p_holm == pytest.approx(min(1.0, 2 * raw))  # two tests: c cannot reject
    assert found["c"].p_holm is None


def test_only_cases_with_two_samples_are_probed_and_only_when_on() -> None:
    assert half_of(case(samples=7)) == 3
    assert [c.id for c in probed_cases([case("a"), case("b", samples=2)], "concurrency")] == ["a", "b"]
    assert probed_cases([case("a")], None) == []


def lower_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    return 0.0 if failures == 0 else float(beta.ppf(1 - confidence, failures, trials - failures + 1))


@pytest.mark.parametrize(
    ("weights", "n"),
    [((6, 4), 10), ((6, 4), 20), ((9, 1), 20), ((1, 1, 1, 1), 20)],
)
def test_a_server_whose_answers_do_not_depend_on_concurrency_is_flagged_at_most_alpha_of_the_time(
    weights: tuple[int, ...], n: int
) -> None:
    """Seeded: both halves drawn from one distribution, 150 runs per regime; the probe's modal answer is
    picked from the alone half, which a plain two-sample test would not allow for."""
    rng = random.Random(f"probe-{weights}-{n}")
    labels = [str(i) for i in range(len(weights))]
    runs, flagged = 150, 0
    for _ in range(runs):
        drawn = samples("c", rng.choices(labels, weights=weights, k=n))
        flagged += probe_results([case(samples=n)], drawn, alpha=ALPHA)["c"].depends
    assert lower_bound(flagged, runs) <= ALPHA, flagged


def test_a_server_that_is_stable_alone_and_varies_under_load_is_found() -> None:
    """Seeded: alone always "42"; under load "42" half the time, else one of three others; N = 20."""
    rng = random.Random("probe-power")
    runs, found_it = 100, 0
    for _ in range(runs):
        loaded = [rng.choice(["42", "42", "42", "42.", "forty-two", "42!"]) for _ in range(10)]
        drawn = samples("c", ["42"] * 10 + loaded)
        found_it += probe_results([case(samples=20)], drawn, alpha=ALPHA)["c"].depends
    assert found_it / runs >= 0.8, found_it
