"""The typed report: which keys the JSON has when, and what it never holds."""

from __future__ import annotations

from stabilitygate.report.model import BaselineFacts, EmbeddingFacts, RunFacts, SamplingFacts, Summary
from stabilitygate.typed_json import JSON, to_json
from tests.support.typed import typed

COUNTS = {"cases": 3, "passed": 1, "failed": 1, "regressed": 0, "warned": 0, "new": 1, "errors": 0}


def sampling(**changes: object) -> SamplingFacts:
    base = {"requests": 10, "retries": 1, "interrupted": False, "budget_exhausted": False, "fatal_error": None,
            "early_stopped": {"b": "why", "a": "why"}, "samples_file": "s.jsonl", "shard": "1/2"}  # fmt: skip
    return SamplingFacts(**{**base, **changes})  # type: ignore[arg-type]


def json_of(value: object) -> dict[str, JSON]:
    data = to_json(value)
    assert isinstance(data, dict)
    return data


def test_changed_only_keys_appear_only_in_changed_only_reports() -> None:
    plain = json_of(Summary(**COUNTS))
    assert "unchanged" not in plain and "requests_saved" not in plain
    changed = json_of(Summary(**COUNTS, unchanged=7, requests_saved=70))
    assert (changed["unchanged"], changed["requests_saved"]) == (7, 70)
    facts = RunFacts(BaselineFacts("b.json", "compared"), None, "regression")
    assert "changed_only" not in json_of(facts) and "sampling" not in json_of(facts)
    assert typed(RunFacts, {**json_of(facts), "changed_only": True}).changed_only is True


def test_summary_reads_back_with_missing_numbers_as_null() -> None:
    summary = typed(Summary, {**COUNTS, "tar_raw": 0.5, "unknown_future_key": 1})
    assert summary.tar_raw == 0.5 and summary.best_possible_accuracy is None and summary.unchanged is None


def test_cache_hits_never_reach_the_json() -> None:
    facts = EmbeddingFacts("all-MiniLM-L6-v2", 12, 256, "truncated past 256", texts_from_cache=12)
    assert "texts_from_cache" not in json_of(facts)
    assert typed(EmbeddingFacts, json_of(facts)) == facts  # the count is not part of equality either


def test_merged_sampling_facts_add_up_the_shards() -> None:
    merged = SamplingFacts.merged([sampling(), sampling(requests=5, retries=0, early_stopped={"c": "x"},
                                                        fatal_error="HTTP 401", shard="2/2")])  # fmt: skip
    assert (merged.requests, merged.retries, merged.fatal_error) == (15, 1, "HTTP 401")
    assert set(merged.early_stopped) == {"a", "b", "c"} and merged.shard is None and merged.samples_file is None
    stopped = json_of(merged)["early_stopped"]
    assert merged.could_not_measure and isinstance(stopped, dict) and list(stopped) == ["a", "b", "c"]


def test_a_report_of_an_older_version_without_warned_reads_as_none_warned() -> None:
    older = {k: v for k, v in COUNTS.items() if k != "warned"}
    assert typed(Summary, older).warned == 0
