"""`stabilitygate score` and `merge`: the same report from samples files, with no model call."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.pipeline.evaluate import SamplingFacts, evaluate
from stabilitygate.pipeline.options import OutputOptions, Shard
from stabilitygate.pipeline.select import parse_shard
from stabilitygate.samples import Sample
from stabilitygate.sampling.samples_file import read_samples
from stabilitygate.suite.load import LoadedSuite, load_suite


def score_samples(samples_paths: Sequence[Path], suite_path: Path, output: OutputOptions) -> int:
    return _score(load_suite(suite_path), samples_paths, output, sampling=None)


def merge_reports(report_paths: Sequence[Path], output: OutputOptions, suite_path: Path | None = None) -> int:
    """Join the shards of one suite: their samples scored together, so Holm and the summary see every case."""
    reports = [_read_report(p) for p in report_paths]
    check_shards(list(zip(report_paths, reports, strict=True)))
    suites = {r["suite"]["path"] for r in reports}
    if suite_path is None:
        if len(suites) != 1:
            raise BadInput(f"the reports come from different suites: {', '.join(sorted(suites))}")
        suite_path = Path(suites.pop())
    samples_paths = [_samples_file_of(r, p) for r, p in zip(reports, report_paths, strict=True)]
    shards = [r["run"].get("sampling") or {} for r in reports]
    sampling = None
    if any(s.get("interrupted") or s.get("fatal_error") or s.get("budget_exhausted") for s in shards):
        sampling = SamplingFacts(
            requests=sum(s.get("requests") or 0 for s in shards),
            retries=sum(s.get("retries") or 0 for s in shards),
            interrupted=any(s.get("interrupted") for s in shards),
            budget_exhausted=any(s.get("budget_exhausted") for s in shards),
            fatal_error=next((s["fatal_error"] for s in shards if s.get("fatal_error")), None),
            early_stopped={k: v for s in shards for k, v in (s.get("early_stopped") or {}).items()},
            samples_file=None,
            shard=None,
        )
    # N as the shard jobs ran it (`--samples` may have overridden the suite's).
    requested = {
        c["id"]: c["samples_requested"]
        for r in reports
        for c in r.get("cases") or []
        if isinstance(c, dict) and isinstance(c.get("samples_requested"), int)
    }
    return _score(load_suite(suite_path), samples_paths, output, sampling=sampling, requested=requested)


def check_shards(reports: Sequence[tuple[Path, dict[str, Any]]]) -> None:
    """Every shard of one matrix, once each: otherwise the verdict would look whole and not be.

    A missing shard is a failure to measure (its job died); anything else that does not fit is bad input.
    """
    names = {str(r["suite"].get("name")) for _, r in reports}
    if len(names) > 1:
        raise BadInput(f"the reports come from different suites: {', '.join(sorted(names))}")
    shards: dict[Shard, list[str]] = defaultdict(list)
    for path, report in reports:
        label = ((report.get("run") or {}).get("sampling") or {}).get("shard")
        if not label:
            raise BadInput("the report of a whole run, not of a shard: `merge` joins `run --shard K/N` reports",
                           path=str(path))
        try:
            shards[parse_shard(str(label))].append(str(path))
        except BadInput:
            raise BadInput(f"unreadable shard {label!r} in the report", path=str(path)) from None
    counts = {shard.count for shard in shards}
    if len(counts) > 1:
        found = ", ".join(str(shard) for shard in sorted(shards, key=lambda s: (s.count, s.index)))
        raise BadInput(f"the reports come from different shardings ({found}): merge the shards of one matrix")
    for shard, found in shards.items():
        if len(found) > 1:
            raise BadInput(f"shard {shard} has {len(found)} reports ({', '.join(found)}): keep one per shard")
    count = counts.pop() if counts else 0
    missing = [str(Shard(k, count)) for k in range(1, count + 1) if Shard(k, count) not in shards]
    if missing:
        raise CannotMeasure(
            f"no report of shard {', '.join(missing)} among the reports given: did that job fail before "
            "writing it, or its artifact upload? The verdict must cover the whole suite"
        )


def _score(
    loaded: LoadedSuite,
    samples_paths: Sequence[Path],
    output: OutputOptions,
    sampling: SamplingFacts | None,
    requested: dict[str, int] | None = None,
) -> int:
    samples: list[Sample] = []
    seen: dict[tuple[str, int], Path] = {}
    for path in samples_paths:
        for sample in read_samples(path):
            key = (sample.case, sample.index)
            if key in seen:
                raise BadInput(
                    f"sample {sample.index} of case {sample.case!r} appears twice (also in {seen[key]})",
                    path=str(path),
                )
            seen[key] = path
            samples.append(sample)
    all_cases = loaded.resolved_cases()
    present = {s.case for s in samples}
    cases = [c for c in all_cases if c.id in present]
    unknown = sorted(present - {c.id for c in all_cases})
    if unknown:
        ignored = ", ".join(unknown)
        print(f"stabilitygate: warning: samples of cases not in the suite ignored: {ignored}", file=sys.stderr)
    absent = [c.id for c in all_cases if c.id not in present]
    if absent:
        print(f"stabilitygate: note: no samples for {len(absent)} case(s): {', '.join(absent)}", file=sys.stderr)
    if not cases:
        raise BadInput("no samples of any case of the suite", path=str(samples_paths[0]) if samples_paths else None)
    last_index: dict[str, int] = {}
    for sample in samples:
        last_index[sample.case] = max(last_index.get(sample.case, 0), sample.index)
    asked = requested or {}
    requested = {c.id: max(asked.get(c.id, c.samples), 1 + last_index[c.id]) for c in cases}
    return evaluate(
        loaded,
        cases,
        samples,
        output=output,
        requested=requested,
        sampling=sampling,
    )


def _read_report(path: Path) -> dict[str, Any]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput("no such file", path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInput(f"not a report JSON: {exc}", path=str(path)) from None
    if not isinstance(report, dict) or not isinstance(report.get("suite"), dict) or "run" not in report:
        raise BadInput("not a stabilitygate report (expected keys suite and run)", path=str(path))
    return report


def _samples_file_of(report: dict[str, Any], report_path: Path) -> Path:
    recorded = ((report.get("run") or {}).get("sampling") or {}).get("samples_file")
    if not recorded:
        raise BadInput("the report names no samples file: run the shard with --samples-out", path=str(report_path))
    for candidate in (Path(recorded), report_path.parent / recorded, report_path.parent / Path(recorded).name):
        if candidate.is_file():
            return candidate
    raise BadInput(f"its samples file {recorded!r} was not found (looked beside the report too)", path=str(report_path))
