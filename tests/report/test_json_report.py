"""The report JSON: docs/design.md §8, "Files"'s keys, byte-identical for identical inputs."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np

from stabilitygate import TOOL_NAME, __version__
from stabilitygate.judge.baseline import baseline_from_run
from stabilitygate.judge.gate import verdict_counts
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.metrics import Metrics
from stabilitygate.plain import plain
from stabilitygate.report.json_report import build_report, dump_report
from stabilitygate.report.model import BaselineFacts, Report, RunFacts, SuiteRef
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds
from stabilitygate.typed_json import SCHEMA_VERSION, to_json
from tests.support.typed import typed

CASE_KEYS = {
    "id", "line", "hash", "verdict", "reasons", "samples_requested", "samples_ok", "sample_errors", "primary",
    "metrics", "completions", "answers", "fingerprints", "errors", "finish_reasons", "usage", "notes",
    "diagnostics", "baseline", "parsed_by",
}  # fmt: skip


def case(cid: str, line: int) -> ResolvedCase:
    return ResolvedCase(
        id=cid,
        line=line,
        messages=(Message(role="user", content=f"question {cid}"),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(),
        answer=AnswerSpec(choice=["A", "B"]),
        expected="A",
        samples=10,
    )


def measured(cid: str, answers: list[str]) -> CaseMeasurement:
    n = len(answers)
    counts = sorted(Counter(answers).items(), key=lambda kv: (-kv[1], kv[0]))
    return typed(
        CaseMeasurement,
        dict(
            id=cid,
            samples_requested=n,
            samples_ok=n,
            sample_errors=0,
            metrics={
                "unique_completions": len(counts),
                "parsed_agreement": counts[0][1] / n,
                "mode_share": counts[0][1] / n,
                "cosine_min": 0.1 + 0.2,
                "cosine_std": float("nan"),
                "accuracy": np.float64(answers.count("A") / n),
            },
            completions=[{"text": f"Answer: {a}", "count": c} for a, c in counts],
            answers=[{"answer": a, "count": c} for a, c in counts],
            fingerprints=[{"fingerprint": "fp", "count": n}],
            finish_reasons={"stop": n},
            usage={"prompt_tokens": 12 * n, "completion_tokens": 3 * n},
            notes=["bad \ud800 surrogate"],
        ),
    )


RUN_FACTS = RunFacts(BaselineFacts(".stability/suite.baseline.json", "compared"), None, "regression")


def build(measurements: list[CaseMeasurement], verdicts: list[CaseVerdict] | None = None) -> dict[str, Any]:
    cases = [case("first", 8), case("second", 12)]
    baseline = baseline_from_run(cases, [measured("first", ["A"] * 10), measured("second", ["A"] * 10)], "demo")
    verdicts = verdicts or judge_cases(cases, measurements, baseline, Regression())
    return build_report(
        SuiteRef(".stability/suite.yml", "demo"),
        cases,
        measurements,
        verdicts,
        summary=SuiteNumbers(tar_raw=0.5, tar_parsed=0.5, samples_requested=20),
        counts=verdict_counts(verdicts),
        run=RUN_FACTS,
        exit_code=1,
        verdict="fail",
    ).to_dict()


RUN = [measured("first", ["A"] * 10), measured("second", ["A"] * 6 + ["B"] * 4)]


def test_top_level_keys() -> None:
    report = build(RUN)
    assert report["schema_version"] == SCHEMA_VERSION == 2
    assert report["tool"] == {"name": TOOL_NAME, "version": __version__}
    assert report["suite"] == {"path": ".stability/suite.yml", "name": "demo"}
    assert (report["verdict"], report["exit_code"]) == ("fail", 1)
    assert report["run"] == {
        "baseline": {"path": ".stability/suite.baseline.json", "status": "compared"},
        "embedding": None,
        "fail_on": "regression",
    }
    summary = report["summary"]
    assert {k: summary[k] for k in ("cases", "passed", "failed", "regressed", "new", "errors")} == {
        "cases": 2, "passed": 1, "failed": 0, "regressed": 1, "new": 0, "errors": 0,
    }  # fmt: skip
    assert summary["tar_raw"] == 0.5 and summary["samples_requested"] == 20
    assert summary["best_possible_accuracy"] is None and "completion_tokens" in summary


def test_cases_carry_everything() -> None:
    first, second = build(RUN)["cases"]
    assert set(first) == CASE_KEYS
    assert (first["id"], first["line"], first["verdict"]) == ("first", 8, "pass")
    assert first["hash"] == case("first", 8).definition_hash
    assert second["verdict"] == "regressed" and second["primary"] == {"metric": "parsed_agreement", "k": 6, "n": 10}
    assert second["baseline"]["p_value"] == 0.043344 and second["baseline"]["baseline_k"] == 10  # 210 / 4845
    assert second["answers"] == [{"answer": "A", "count": 6}, {"answer": "B", "count": 4}]
    assert first["usage"] == {"prompt_tokens": 120, "completion_tokens": 30}


def test_numbers_are_plain_json() -> None:
    metrics = build(RUN)["cases"][1]["metrics"]
    assert metrics["cosine_min"] == 0.3  # 0.30000000000000004 rounded
    assert metrics["cosine_std"] is None  # NaN is not JSON
    assert type(metrics["accuracy"]) is float and metrics["accuracy"] == 0.6
    assert build(RUN)["cases"][0]["notes"] == ["bad \ufffd surrogate"]


def test_identical_inputs_give_identical_bytes_in_any_order() -> None:
    first = dump_report(Report.from_dict(build(RUN)))
    assert dump_report(Report.from_dict(build(list(reversed(RUN))))) == first
    assert first.endswith("}\n") and json.loads(first)["cases"][0]["id"] == "first"
    assert first == json.dumps(json.loads(first), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    for word in ("timestamp", "duration", "elapsed"):
        assert word not in first


def test_unmeasured_case_is_an_error_row() -> None:
    cases = [case("first", 8), case("second", 12)]
    verdicts = judge_cases(cases, RUN[:1], None, Regression())
    report = build(RUN[:1], verdicts)
    second = report["cases"][1]
    assert second["verdict"] == "error" and second["samples_ok"] == 0
    assert second["metrics"] == to_json(Metrics())  # every metric unmeasured: null


def test_plain() -> None:
    assert plain({"a": (1, -0.0, float("inf")), 2: {3.0000001}}) == {"a": [1, 0.0, None], "2": [3.0]}
