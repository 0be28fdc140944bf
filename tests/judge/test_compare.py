"""One case against its baseline entry, below the level of verdicts."""

from __future__ import annotations

from typing import Any

import pytest

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.compare import Comparison, Modal, compare_case, conclude
from stabilitygate.judge.wording import (
    p_after_and_before_holm,
    p_after_holm,
    p_number,
    p_phrase,
    same_value,
    show,
    update_hint,
)
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds


def case(parser: bool) -> ResolvedCase:
    return ResolvedCase(
        id="c",
        line=1,
        messages=(Message(role="user", content="q"),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(),
        answer=AnswerSpec(json="/n") if parser else None,
        expected=None,
        samples=10,
    )


def run(completions: list[tuple[str, int]], answers: list[tuple[Any, int]], **metrics: Any) -> CaseMeasurement:
    n = sum(c for _, c in completions)
    return CaseMeasurement(
        id="c",
        samples_requested=n,
        samples_ok=n,
        sample_errors=0,
        metrics={"unique_completions": len(completions), "cosine_min": None, "semantic_agreement": None, **metrics},
        completions=[{"text": t, "count": c} for t, c in completions],
        answers=[{"answer": a, "count": c} for a, c in answers],
        fingerprints=[],
    )


def compare(c: ResolvedCase, now: CaseMeasurement, before: BaselineCase, **kwargs: Any) -> Comparison:
    """compare_case with the primary agreement the judge computes once per case."""
    return compare_case(c, now, before, primary_agreement(c, now), **kwargs)


def entry(completions: list[tuple[str, int]], answers: list[tuple[Any, int]], **metrics: Any) -> BaselineCase:
    m = run(completions, answers, **metrics)
    k = answers[0][1] if answers else completions[0][1]
    metric = "parsed_agreement" if answers else "mode_share"
    return BaselineCase(
        hash=case(bool(answers)).definition_hash,
        samples=m.samples_ok,
        metrics=m.metrics,
        primary={"metric": metric, "k": k, "n": m.samples_ok},
        modal_completion=completions[0][0],
        modal_answer=answers[0][0] if answers else None,
        completions=m.completions,
        answers=m.answers,
        fingerprints=[],
    )


def test_json_answers_compare_by_value() -> None:
    assert same_value({"a": 1, "b": [2]}, {"b": [2], "a": 1})
    assert same_value(3, 3.0)
    assert not same_value(True, 1)
    assert not same_value("1", 1)


def test_numeric_json_answer_is_not_a_change() -> None:
    now = run([('{"n": 3.0}', 10)], [(3.0, 10)])
    before = entry([('{"n": 3}', 10)], [(3, 10)])
    c = compare(case(True), now, before)
    assert c.modal.changed is False and c.modal.differs is False
    assert conclude(c, None, Regression(), cluster_cosine=0.95, family=1).regressed is False


def test_majority_means_more_than_half() -> None:
    assert Modal("A", 6, 10).majority and not Modal("A", 5, 10).majority


def test_show_is_one_short_quoted_line() -> None:
    assert show("A") == "'A'"
    assert show("it's\nmulti   line") == "'it\\'s multi line'"
    assert show({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    long = show("x" * 500)
    assert len(long) == 82 and long.endswith("…'")


@pytest.mark.parametrize(
    ("p", "phrase", "number", "tight"),
    [
        (0.5, "p = 0.50", "0.50", "0.50"),
        (0.1, "p = 0.10", "0.10", "0.10"),
        (0.0211, "p = 0.021", "0.021", "0.021"),
        (0.001, "p = 0.001", "0.001", "0.001"),
        (0.0004, "p < 0.001", "< 0.001", "<0.001"),
    ],
)
def test_p_values_are_worded_in_one_place(p: float, phrase: str, number: str, tight: str) -> None:
    assert p_phrase(p) == phrase
    assert p_number(p) == number and p_number(p, spaced=False) == tight
    assert p_after_holm(p) == f"{phrase} after Holm"


def test_p_before_and_after_holm() -> None:
    assert p_after_and_before_holm(0.042, 0.021) == "p = 0.042 after Holm (0.021 before)"
    assert p_after_and_before_holm(0.0008, 0.0004) == "p < 0.001 after Holm (< 0.001 before)"


def test_the_update_hint_names_the_flag_and_in_markdown_the_action_input() -> None:
    assert update_hint() == "run with --update-baseline to record it"
    markdown = update_hint("markdown")
    assert "`--update-baseline`" in markdown and "`update-baseline: true`" in markdown and "commit" in markdown


def test_drift_guard_without_semantics_uses_the_exact_mode() -> None:
    # Semantic layer off in the metrics but a similarity given: the exact modal completion decides.
    scattered = run([("a", 3), ("b", 3), ("c", 4)], [])
    before = entry([("z", 10)], [])
    c = compare(case(False), scattered, before, similarity=lambda x, y: 0.1)
    assert c.meaning.checked is False and c.meaning.cosine == 0.1
    steady = run([("y", 10)], [])
    assert compare(case(False), steady, before, similarity=lambda x, y: 0.1).meaning.checked is True


def test_identical_modal_texts_need_no_model() -> None:
    def never(a: str, b: str) -> float:
        raise AssertionError("similarity called for identical texts")

    c = compare(case(False), run([("same", 10)], []), entry([("same", 10)], []), similarity=never)
    assert c.meaning.cosine == 1.0


def test_conclusion_without_holm_uses_the_raw_p() -> None:
    c = compare(case(True), run([("x", 6), ("y", 4)], [(1, 6), (2, 4)]), entry([("x", 10)], [(1, 10)]))
    result = conclude(c, None, Regression(), cluster_cosine=0.95, family=1)
    assert result.regressed and result.dropped and result.to_json()["p_holm"] is None
    assert "p = 0.021 after Holm" in result.reasons[0]


def test_baseline_without_the_current_metric_is_not_compared() -> None:
    before = entry([("x", 10)], [])
    before = BaselineCase(**{**before.__dict__, "primary": None, "metrics": {}})
    c = compare(case(False), run([("x", 10)], []), before)
    assert c.agreement.test is None and c.p_value is None
    reasons = conclude(c, None, Regression(), cluster_cosine=0.95, family=0).reasons
    assert reasons[0] == "mode share 10/10: the baseline has no value to compare with"
