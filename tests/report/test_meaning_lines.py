from __future__ import annotations

from typing import Any

from stabilitygate.metrics import Metrics
from stabilitygate.report.entailment_facts import EntailmentFacts
from stabilitygate.report.meaning_lines import meaning_lines
from stabilitygate.results import CaseMeasurement
from stabilitygate.typed_json import to_json
from tests.support.typed import typed


def measurement(metrics: Any, diagnostics: dict[str, Any] | None = None) -> CaseMeasurement:
    data = {"id": "c", "samples_requested": 10, "samples_ok": 10, "sample_errors": 0, "metrics": metrics}
    return typed(CaseMeasurement, {**data, "diagnostics": diagnostics or {}})


def test_the_cosine_bar_cut_is_shown_with_both_pairs() -> None:
    pairs = {
        "least_similar_within": {"cosine": 0.951234, "texts": ["At 9 pm.", "At nine."]},
        "most_similar_across": {"cosine": 0.949, "texts": ["At 9 pm.", "At 5 pm."]},
    }
    m = measurement(
        {"cluster_cosine_min_within": 0.951234, "cluster_cosine_max_across": 0.949}, {"cluster_pairs": pairs}
    )
    assert meaning_lines(m) == [
        'Where the clustering bar cut: least similar pair inside a cluster 0.951 ("At 9 pm." / "At nine."); '
        'most similar pair in different clusters 0.949 ("At 9 pm." / "At 5 pm.")'
    ]


def test_a_missing_pair_says_why() -> None:
    m = measurement({"cluster_cosine_min_within": None, "cluster_cosine_max_across": None})
    (line,) = meaning_lines(measurement(m.metrics, {"cluster_pairs": {}}))
    assert "none (no cluster holds two distinct completions)" in line and "none (one cluster)" in line


def test_the_judge_cost_is_shown_and_nothing_without_either() -> None:
    m = measurement({"entailment_calls": 1, "entailment_prompt_tokens": 1200, "entailment_completion_tokens": 3})
    assert meaning_lines(m) == ["Meanings by the entailment judge: 1 judgment (1,200 prompt + 3 completion tokens)"]
    assert meaning_lines(measurement({"semantic_clusters": 2})) == []


def test_judge_facts_total_the_cases_and_round_trip() -> None:
    facts = EntailmentFacts.of_cases(
        [
            Metrics(entailment_calls=3, entailment_prompt_tokens=100, entailment_completion_tokens=3),
            Metrics(entailment_calls=None),
        ],
        unreadable=1,
        failed=0,
        requests=7,
    )
    assert (facts.cases, facts.calls, facts.prompt_tokens, facts.unreadable_replies) == (1, 3, 100, 1)
    written = to_json(facts)
    assert typed(EntailmentFacts, written) == facts  # requests is not part of the report
    assert isinstance(written, dict) and "requests" not in written
    assert facts.summary == (
        "Entailment judge: 3 judgments over 1 case (100 prompt + 3 completion tokens); "
        "1 reply named no label and counted as different meanings."
    )
