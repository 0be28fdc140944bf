"""Builders shared by the comparison tests: a case, a run of it, and a baseline entry of such a run."""

from __future__ import annotations

from typing import Any

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.compare import Comparison, compare_case
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds
from tests.support.typed import typed


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
    return typed(
        CaseMeasurement,
        dict(
            id="c",
            samples_requested=n,
            samples_ok=n,
            sample_errors=0,
            metrics={"unique_completions": len(completions), "cosine_min": None, "semantic_agreement": None, **metrics},
            completions=[{"text": t, "count": c} for t, c in completions],
            answers=[{"answer": a, "count": c} for a, c in answers],
            fingerprints=[],
        ),
    )


def compare(c: ResolvedCase, now: CaseMeasurement, before: BaselineCase, **kwargs: Any) -> Comparison:
    """compare_case with the primary agreement the judge computes once per case."""
    return compare_case(c, now, before, primary_agreement(c, now), **kwargs)


def entry(completions: list[tuple[str, int]], answers: list[tuple[Any, int]], **metrics: Any) -> BaselineCase:
    m = run(completions, answers, **metrics)
    k = answers[0][1] if answers else completions[0][1]
    metric = "parsed_agreement" if answers else "mode_share"
    return typed(
        BaselineCase,
        dict(
            hash=case(bool(answers)).definition_hash,
            samples=m.samples_ok,
            metrics=m.metrics,
            primary={"metric": metric, "k": k, "n": m.samples_ok},
            modal_completion=completions[0][0],
            modal_answer=answers[0][0] if answers else None,
            completions=m.completions,
            answers=m.answers,
            fingerprints=[],
        ),
    )
