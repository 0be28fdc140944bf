"""The pipeline's tail, shared by run, score and merge: measure -> judge -> report -> files."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from stabilitygate.atomic import write_text_atomic
from stabilitygate.errors import EXIT_CANNOT_MEASURE
from stabilitygate.judge.baseline import Baseline, baseline_from_run, merge_baselines, read_baseline, write_baseline
from stabilitygate.judge.gate import exit_code, run_verdict
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.measure.case import measure_case
from stabilitygate.measure.summary import suite_summary
from stabilitygate.pipeline.options import OutputOptions, default_baseline_path
from stabilitygate.providers import fingerprint_note
from stabilitygate.report.json_report import build_report, dump_report
from stabilitygate.report.junit import render_junit
from stabilitygate.report.markdown import render_markdown
from stabilitygate.results import CaseMeasurement
from stabilitygate.samples import Sample
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase


@dataclass(frozen=True)
class SamplingFacts:
    """What only a live run knows (absent when scoring a samples file)."""

    requests: int
    retries: int
    interrupted: bool
    budget_exhausted: bool
    fatal_error: str | None
    early_stopped: Mapping[str, str]
    samples_file: str | None
    shard: str | None

    @property
    def could_not_measure(self) -> bool:
        return self.interrupted or self.budget_exhausted or self.fatal_error is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "retries": self.retries,
            "interrupted": self.interrupted,
            "budget_exhausted": self.budget_exhausted,
            "fatal_error": self.fatal_error,
            "early_stopped": dict(sorted(self.early_stopped.items())),
            "samples_file": self.samples_file,
            "shard": self.shard,
        }


def resolve_baseline(loaded: LoadedSuite, output: OutputOptions) -> tuple[Path, Baseline | None]:
    """Read the baseline before anything is spent: an unreadable one is exit 2, the file untouched."""
    path = output.baseline or default_baseline_path(Path(loaded.path))
    return path, read_baseline(path)


def evaluate(
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    samples: Iterable[Sample],
    *,
    output: OutputOptions,
    requested: Mapping[str, int],
    sampling: SamplingFacts | None = None,
    baseline: tuple[Path, Baseline | None] | None = None,
) -> int:
    """Measure, judge and report; write the report files and, when asked, the baseline. Returns the exit code.

    `baseline` is the (path, contents) a live run read before sampling; scoring reads it here.
    """
    baseline_path, baseline = baseline or resolve_baseline(loaded, output)
    by_case: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_case[sample.case].append(sample)

    embedder = _make_embedder(loaded)
    measurements = [
        _with_notes(
            measure_case(case, by_case.get(case.id, []), embedder=embedder, samples_requested=requested[case.id]),
            case,
            sampling,
        )
        for case in cases
    ]
    similarity = None
    if embedder is not None:
        from stabilitygate.measure.embedder import similarity as embed_similarity

        def similarity(a: str, b: str) -> float:
            return embed_similarity(embedder, a, b)

    verdicts = judge_cases(cases, measurements, baseline, loaded.suite.regression, similarity=similarity)
    could_not_measure = sampling is not None and sampling.could_not_measure
    code = exit_code(verdicts, output.fail_on, could_not_measure=could_not_measure)
    verdict = run_verdict(verdicts, fatal=could_not_measure)

    baseline_status = "compared" if baseline is not None else "missing"
    if output.update_baseline:
        if code == EXIT_CANNOT_MEASURE:
            baseline_status = "not written: the run could not measure"
        else:
            fresh = baseline_from_run(cases, measurements, loaded.suite.name)
            suite_ids = {c.id for c in loaded.suite.cases}  # a partial run keeps the others' entries
            write_baseline(baseline_path, merge_baselines(baseline, fresh, suite_ids))
            baseline_status = "updated"
            code = 0
    run: dict[str, Any] = {
        "baseline": {"path": str(baseline_path), "status": baseline_status},
        "embedding": _embedding_info(embedder),
        "fail_on": output.fail_on,
    }
    if sampling is not None:
        run["sampling"] = sampling.to_json()
    report = build_report(
        suite_name=loaded.suite.name,
        suite_path=loaded.path,
        cases=cases,
        measurements=measurements,
        verdicts=verdicts,
        summary=suite_summary(measurements, cases),
        run=run,
        exit_code=code,
        verdict=verdict,
    )
    write_outputs(report, output)
    _print_summary(report)
    return code


def write_outputs(report: dict[str, Any], output: OutputOptions) -> None:
    if output.report_json:
        write_text_atomic(output.report_json, dump_report(report))
    if output.markdown:
        write_text_atomic(output.markdown, render_markdown(report))
    if output.junit:
        write_text_atomic(output.junit, render_junit(report))


def _make_embedder(loaded: LoadedSuite) -> Any:
    settings = loaded.suite.embedding
    if not settings.enabled:
        return None
    from stabilitygate.measure.embedder import Embedder

    return Embedder(settings.model, batch_size=settings.batch_size)


def _embedding_info(embedder: Any) -> dict[str, Any] | None:
    if embedder is None:
        return None
    from stabilitygate.measure.embedder import embedding_info

    computed, total = embedder.texts_embedded, embedder.distinct_texts
    print(
        f"stabilitygate: embedded {total} distinct texts ({computed} by the model, {total - computed} from the cache)",
        file=sys.stderr,
    )
    return embedding_info(embedder)


def _with_notes(
    measurement: CaseMeasurement, case: ResolvedCase, sampling: SamplingFacts | None
) -> CaseMeasurement:
    """Notes only the pipeline knows: an early stop, a provider that cannot show its backend."""
    notes = list(measurement.notes)
    if sampling is not None and measurement.id in sampling.early_stopped:
        notes.append(f"sampling stopped early: {sampling.early_stopped[measurement.id]}")
    fingerprint = fingerprint_note(case.provider.type)
    if fingerprint:
        notes.append(fingerprint)
    return measurement if notes == measurement.notes else replace(measurement, notes=notes)


def _print_summary(report: Mapping[str, Any]) -> None:
    summary = report["summary"]
    parts = [f"{summary['cases']} cases"] + [
        f"{summary[k]} {k}" for k in ("passed", "failed", "regressed", "new", "errors") if summary.get(k)
    ]
    print(f"stabilitygate: {report['verdict']} ({', '.join(parts)})", file=sys.stderr)
    for case in report["cases"]:
        if case["verdict"] != "pass":
            reasons = "; ".join(case["reasons"][:3])
            print(f"  {case['id']}: {case['verdict']}: {reasons}", file=sys.stderr)


__all__ = ["SamplingFacts", "evaluate", "resolve_baseline", "write_outputs"]
