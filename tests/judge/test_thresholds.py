"""Could the case be measured, which metric is its agreement, and which thresholds does it break."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.thresholds import ThresholdCheck, certain_violation, check_thresholds, measurement_error
from stabilitygate.results import Agreement, CaseMeasurement
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds
from tests.support.typed import typed


def case(parser: bool = True, samples: int = 10, **thresholds: Any) -> ResolvedCase:
    return ResolvedCase(
        id="c",
        line=4,
        messages=(Message(role="user", content="q"),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(**thresholds),
        answer=AnswerSpec(choice=["A", "B"]) if parser else None,
        expected=None,
        samples=samples,
    )


def measured(answers: list[str], *, errors: int = 0, **metrics: Any) -> CaseMeasurement:
    n = len(answers)
    by_answer = sorted(Counter(answers).items(), key=lambda kv: (-kv[1], kv[0]))
    return typed(
        CaseMeasurement,
        dict(
            id="c",
            samples_requested=n + errors,
            samples_ok=n,
            sample_errors=errors,
            metrics={
                "unique_completions": len(by_answer),
                "mode_share": by_answer[0][1] / n if n else None,
                "parsed_agreement": by_answer[0][1] / n if n else None,
                "cosine_min": None,
                "semantic_agreement": None,
                **metrics,
            },
            completions=[{"text": f"It is {a}.", "count": c} for a, c in by_answer],
            answers=[{"answer": a, "count": c} for a, c in by_answer],
            fingerprints=[],
            errors=[{"error": "HTTP 503 from the provider", "count": errors}] if errors else [],
        ),
    )


def check(c: ResolvedCase, m: CaseMeasurement) -> ThresholdCheck:
    """check_thresholds with the primary agreement the judge computes once per case."""
    return check_thresholds(c, m, primary_agreement(c, m))


def test_primary_metric_follows_the_parser_then_semantics_then_exact_text() -> None:
    m = measured(["A"] * 7 + ["B"] * 3, semantic_agreement=0.9)
    assert primary_agreement(case(), m) == Agreement("parsed_agreement", 7, 10)
    assert primary_agreement(case(parser=False), m) == Agreement("semantic_agreement", 9, 10)
    plain = measured(["A"] * 7 + ["B"] * 3)
    assert primary_agreement(case(parser=False), plain) == Agreement("mode_share", 7, 10)


def test_all_parse_failures_is_zero_agreement() -> None:
    m = measured(["A"] * 4)
    m = replace(m, answers=())
    assert primary_agreement(case(), m).k == 0


def test_more_than_half_failed_is_an_error_by_default() -> None:
    assert measurement_error(case(), measured(["A"] * 5, errors=5)) is None
    reason = measurement_error(case(), measured(["A"] * 4, errors=6))
    assert reason is not None and "6 of 10 samples failed" in reason and "5 allowed" in reason
    assert "HTTP 503" in reason


def test_max_sample_errors_overrides_the_default() -> None:
    assert measurement_error(case(max_sample_errors=0), measured(["A"] * 9, errors=1)) is not None
    assert measurement_error(case(max_sample_errors=3), measured(["A"] * 7, errors=3)) is None


def test_fewer_than_two_successes_cannot_be_measured() -> None:
    reason = measurement_error(case(max_sample_errors=100), measured(["A"], errors=1))
    assert reason is not None and "only 1 of 2" in reason


def test_each_threshold_names_its_numbers() -> None:
    m = measured(
        ["A"] * 6 + ["B"] * 3 + ["C"], cosine_min=0.81, semantic_clusters=3, accuracy=0.6, schema_valid_share=0.7
    )
    t = case(
        max_unique=2,
        min_mode_share=0.8,
        min_agreement=0.9,
        min_cosine=0.9,
        max_semantic_clusters=1,
        min_accuracy=0.7,
        min_schema_valid=0.8,
    )
    violations = check(t, m).violations
    assert violations == [
        "3 unique completions of 10 where at most 2 are allowed (max_unique)",
        "the most common completion is 6/10 (0.60), below min_mode_share 0.80",
        "agreement 6/10 (0.60), below min_agreement 0.90",
        "the least similar pair of completions has cosine 0.810, below min_cosine 0.900",
        "3 distinct meanings (semantic clusters) where at most 1 are allowed",
        "accuracy 6/10 (0.60), below min_accuracy 0.70",
        "7/10 answers (0.70) meet the schema, below min_schema_valid 0.80",
    ]


def test_met_thresholds_are_listed_and_floats_do_not_flap() -> None:
    m = measured(["A"] * 9 + ["B"])
    result = check(case(min_agreement=0.9, max_unique=2), m)
    assert result.violations == []
    assert result.met == ["unique 2 ≤ 2", "agreement 0.90 ≥ 0.90"]


def test_min_agreement_without_parser_uses_the_primary_metric() -> None:
    m = measured(["A"] * 9 + ["B"], semantic_agreement=0.5)
    (violation,) = check(case(parser=False, min_agreement=0.8), m).violations
    assert violation == "semantic agreement 5/10 (0.50), below min_agreement 0.80"


@pytest.mark.parametrize(
    ("thresholds", "why"),
    [
        ({"min_cosine": 0.9}, "min_cosine not checked: the semantic layer is off"),
        ({"max_semantic_clusters": 1}, "max_semantic_clusters not checked: the semantic layer is off"),
        ({"min_accuracy": 0.5}, "min_accuracy not checked: the case has no `expected` answer"),
        ({"min_schema_valid": 0.5}, "min_schema_valid not checked: the case has no `schema`"),
    ],
)
def test_thresholds_on_null_metrics_are_skipped_with_a_reason(thresholds: dict[str, Any], why: str) -> None:
    result = check(case(**thresholds), measured(["A"] * 10))
    assert result.violations == [] and result.skipped == [why]


def unparsed(parsed: int, failed: int) -> CaseMeasurement:
    """A choice case of `parsed` answers "A" and `failed` completions in which no label was found."""
    m = measured(["A"] * parsed + ["?"] * failed, parse_failures=failed)
    by_answer = tuple(a for a in m.answers if a.answer != "?")
    agreement = parsed / (parsed + failed)
    return replace(m, answers=by_answer, metrics=replace(m.metrics, parsed_agreement=agreement))


def test_a_parser_that_never_matches_fails_by_default() -> None:
    result = check(case(), unparsed(0, 8))
    assert result.violations[0] == (
        "0/8 answers parsed (0.00), below min_parsed 0.50: check the parser against the completions"
    )


def test_min_parsed_by_default_is_half_of_the_samples() -> None:
    assert check(case(), unparsed(5, 5)).violations == []
    assert check(case(), unparsed(4, 6)).violations != []
    # The default is checked, not listed as met: only a threshold the suite sets is.
    assert check(case(), unparsed(10, 0)).met == []


def test_min_parsed_set_by_the_suite_is_listed_and_zero_turns_it_off() -> None:
    assert check(case(min_parsed=0.9), unparsed(9, 1)).met == ["parsed 0.90 ≥ 0.90"]
    (violation,) = check(case(min_parsed=0.95), unparsed(9, 1)).violations
    assert violation.startswith("9/10 answers parsed (0.90), below min_parsed 0.95")
    assert check(case(min_parsed=0), unparsed(0, 10)).violations == []


def test_min_parsed_is_silent_on_a_case_without_a_parser() -> None:
    # A suite-wide min_parsed says nothing about free-text cases: they have nothing to parse.
    m = unparsed(0, 10)
    assert check(case(parser=False), m) == ThresholdCheck([], [], [])
    assert check(case(parser=False, min_parsed=0.5), m) == ThresholdCheck([], [], [])


def completions(*texts: str) -> Counter[str]:
    return Counter(texts)


def test_a_case_past_max_unique_has_failed_whatever_comes_next() -> None:
    c = case(parser=False, max_unique=2)
    assert certain_violation(c, completions("a", "b"), 2) is None
    said = certain_violation(c, completions("a", "b", "c"), 3)
    assert said == "3 distinct completions after 3 samples, above max_unique 2"
    # The judge says the same of the finished case: the rule is the thresholds' own.
    assert check(c, measured(["a", "b", "c", "a"])).violations[0].startswith("3 unique completions of 4")


def test_a_mode_share_that_cannot_reach_min_mode_share_has_failed() -> None:
    c = case(parser=False, samples=10, min_mode_share=0.7)
    # 4 drawn, 1 of each: the best left is (1 + 6) / 10 = 0.7, which meets the threshold: go on.
    assert certain_violation(c, completions("a", "b", "c", "d"), 4) is None
    said = certain_violation(c, completions("a", "b", "c", "d", "e"), 5)
    assert said == "mode share can reach at most 0.60 after 5 samples, below min_mode_share 0.7"
    assert certain_violation(c, completions(), 3) is None  # nothing succeeded yet: nothing is known


def test_the_early_stop_counts_shares_with_the_judges_slack() -> None:
    # 0.1 + 0.2 is 0.30000000000000004: a mode share of exactly 3/10 meets it, now and at the end.
    c = case(parser=False, samples=10, min_mode_share=0.1 + 0.2)
    assert certain_violation(c, completions("a", "b", "c", "d", "e", "f", "g", "h"), 8) is None
    assert check(c, measured(["a"] * 3 + list("bcdefgh"))).violations == []
