"""The report JSON (docs/design.md, "Files"): assembled from the judged cases, written byte-stable.

No timestamps or timings: the same inputs give byte-identical reports, so a report can be diffed,
cached and tested.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from stabilitygate.errors import job_outcome
from stabilitygate.judge.gate import RunVerdict, VerdictCounts
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.report.bounds import bounded, text_limit
from stabilitygate.report.model import CaseResult, ParsedBy, Report, RunFacts, SuiteRef, Summary
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import ResolvedCase

NOT_JUDGED = "the case was not judged"


def build_report(
    suite: SuiteRef,
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    verdicts: Sequence[CaseVerdict],
    *,
    summary: SuiteNumbers,
    counts: VerdictCounts,
    run: RunFacts,
    exit_code: int,
    verdict: RunVerdict,
) -> Report:
    """One CaseResult per case that was measured or judged, in suite order."""
    limit = text_limit(measurements)  # the texts are cut to what a report's readers accept
    by_measurement = {m.id: bounded(m, limit) for m in measurements}
    by_verdict = {v.id: v for v in verdicts}
    results = tuple(
        case_result(case, by_measurement.get(case.id), by_verdict.get(case.id))
        for case in cases
        if case.id in by_measurement or case.id in by_verdict
    )
    return Report(
        suite=suite,
        verdict=verdict,
        exit_code=exit_code,
        outcome=job_outcome(exit_code),
        summary=Summary.of(counts, summary),
        run=run,
        cases=results,
    )


def case_result(case: ResolvedCase, m: CaseMeasurement | None, v: CaseVerdict | None) -> CaseResult:
    return CaseResult.of(
        m if m is not None else CaseMeasurement.nothing(case.id, case.samples),
        line=case.line,
        hash=case.definition_hash,
        verdict=v.verdict if v is not None else "error",
        reasons=v.reasons if v is not None else (NOT_JUDGED,),
        primary=v.primary if v is not None else None,
        baseline=v.baseline if v is not None else None,
        parsed_by=ParsedBy.of(case.answer),
    )


def dump_report(report: Report) -> str:
    return json.dumps(report.to_dict(), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
