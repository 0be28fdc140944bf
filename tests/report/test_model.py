"""The typed report: which keys the JSON has when, and what it never holds."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

import stabilitygate
from stabilitygate.errors import BadInput
from stabilitygate.judge.gate import VerdictCounts
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.metrics import Metrics
from stabilitygate.report.model import BaselineFacts, CaseResult, EmbeddingFacts, RunFacts, SamplingFacts, Summary
from stabilitygate.results import CaseMeasurement, CompletionCount, Diagnostics
from stabilitygate.typed_json import JSON, to_json
from tests.support.typed import typed

PACKAGE = Path(stabilitygate.__file__).parent
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


def own_fields(kind: type) -> set[str]:
    """The fields a dataclass declares itself (its annotations), not those it inherits."""
    return set(vars(kind).get("__annotations__", {}))


def test_each_field_is_declared_once() -> None:
    measured = {f.name for f in fields(CaseMeasurement)}
    assert not own_fields(CaseResult) & measured and measured <= {f.name for f in fields(CaseResult)}
    shared = {f.name for f in fields(VerdictCounts)} | {f.name for f in fields(SuiteNumbers)}
    assert not own_fields(Summary) & shared and shared <= {f.name for f in fields(Summary)}


def test_the_version_and_the_run_verdict_are_defined_once() -> None:
    defined: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for target in targets:
                if isinstance(target, ast.Name) and target.id in ("SCHEMA_VERSION", "SchemaVersion", "RunVerdict"):
                    defined.setdefault(target.id, []).append(path.name)
    assert defined == {
        "SCHEMA_VERSION": ["typed_json.py"],
        "SchemaVersion": ["typed_json.py"],
        "RunVerdict": ["gate.py"],
    }


def test_a_case_result_keeps_its_measurement_whole() -> None:
    m = CaseMeasurement(
        id="c",
        samples_requested=4,
        samples_ok=3,
        sample_errors=1,
        metrics=Metrics(unique_completions=2),
        completions=(CompletionCount("a", 2), CompletionCount("b", 1)),
        notes=("a note",),
        diagnostics=Diagnostics(suggestion="x"),
        request_seconds=1.5,
    )
    result = CaseResult.of(m, line=3, hash="h", verdict="pass", reasons=("r",), primary=None, baseline=None)
    assert (result.line, result.verdict, result.completions) == (3, "pass", m.completions)
    assert type(result.measurement) is CaseMeasurement and result.measurement == m
    assert result.measurement.request_seconds == 1.5  # not in the JSON, kept all the same


def test_a_summary_is_its_counts_and_its_numbers() -> None:
    counts = VerdictCounts(**COUNTS)
    numbers = SuiteNumbers(tar_raw=0.5, samples_ok=9)
    summary = Summary.of(counts, numbers)
    assert (summary.cases, summary.new, summary.tar_raw, summary.samples_ok) == (3, 1, 0.5, 9)
    assert summary.with_numbers(SuiteNumbers(tar_raw=1.0)) == Summary(**COUNTS, tar_raw=1.0)


def test_a_baseline_status_is_one_the_gate_writes() -> None:
    for status in ("compared", "missing", "updated", "not written: the run could not measure"):
        assert typed(BaselineFacts, {"path": "b.json", "status": status}).status == status
    with pytest.raises(BadInput, match="at status: Input should be 'compared', 'missing'"):
        typed(BaselineFacts, {"path": "b.json", "status": "exploded"})
