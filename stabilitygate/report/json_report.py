"""The report JSON (DESIGN section 7): every number the gate measured and judged, for machines.

No timestamps or timings: the same inputs give byte-identical reports, so a report can be diffed,
cached and tested.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stabilitygate import TOOL_NAME, __version__
from stabilitygate.judge.gate import verdict_counts
from stabilitygate.judge.thresholds import primary_agreement
from stabilitygate.plain import plain
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import ResolvedCase

SCHEMA_VERSION = 1
SUITE_SUMMARY_KEYS = (
    "tar_raw",
    "tar_parsed",
    "best_possible_accuracy",
    "worst_possible_accuracy",
    "samples_requested",
    "samples_ok",
    "sample_errors",
    "prompt_tokens",
    "completion_tokens",
)


def build_report(
    *,
    suite_name: str,
    suite_path: str,
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    verdicts: Sequence[CaseVerdict],
    summary: Mapping[str, Any],
    run: Mapping[str, Any],
    exit_code: int,
    verdict: str,
) -> dict[str, Any]:
    by_measurement = {m.id: m for m in measurements}
    by_verdict = {v.id: v for v in verdicts}
    report_cases = [
        _case(case, by_measurement.get(case.id), by_verdict.get(case.id))
        for case in cases
        if case.id in by_measurement or case.id in by_verdict
    ]
    merged = {key: None for key in SUITE_SUMMARY_KEYS}
    merged.update(summary)
    merged.update(verdict_counts(verdicts))  # the judge's counts win over anything passed in
    report = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "suite": {"path": suite_path, "name": suite_name},
        "verdict": verdict,
        "exit_code": exit_code,
        "summary": merged,
        "run": dict(run),
        "cases": report_cases,
    }
    return plain(report)


def _case(case: ResolvedCase, m: CaseMeasurement | None, v: CaseVerdict | None) -> dict[str, Any]:
    primary = primary_agreement(case, m) if m is not None else None
    return {
        "id": case.id,
        "line": case.line,
        "hash": case.definition_hash,
        "verdict": v.verdict if v is not None else "error",
        "reasons": list(v.reasons) if v is not None else ["the case was not judged"],
        "samples_requested": m.samples_requested if m is not None else case.samples,
        "samples_ok": m.samples_ok if m is not None else 0,
        "sample_errors": m.sample_errors if m is not None else 0,
        "primary": primary.to_json() if primary is not None else None,
        "metrics": dict(m.metrics) if m is not None else {},
        "completions": list(m.completions) if m is not None else [],
        "answers": list(m.answers) if m is not None else [],
        "fingerprints": list(m.fingerprints) if m is not None else [],
        "errors": list(m.errors) if m is not None else [],
        "finish_reasons": dict(m.finish_reasons) if m is not None else {},
        "usage": dict(m.usage) if m is not None else {},
        "notes": list(m.notes) if m is not None else [],
        "diagnostics": dict(m.diagnostics) if m is not None else {},
        "baseline": v.baseline if v is not None else None,
    }


def dump_report(report: Mapping[str, Any]) -> str:
    return json.dumps(report, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
