"""Scoring samples files and merging shard reports: the same Report as a live run, with no model call."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.pipeline.options import Shard
from stabilitygate.report.model import Report, SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.sampling.judgments_file import judgments_path
from stabilitygate.sampling.samples_file import read_samples
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase


@dataclass(frozen=True)
class ScoredSamples:
    """The samples of a scoring run, the cases they cover and what the caller should be told."""

    samples: list[Sample]
    cases: list[ResolvedCase]
    requested: dict[str, int]
    notes: tuple[str, ...]  # samples of unknown cases ignored, cases without samples


def read_sample_files(paths: Sequence[Path]) -> list[Sample]:
    """Every sample of every file; a sample that appears twice is bad input naming both files."""
    samples: list[Sample] = []
    seen: dict[tuple[str, int], Path] = {}
    for path in paths:
        for sample in read_samples(path):
            key = (sample.case, sample.index)
            if key in seen:
                raise BadInput(
                    f"sample {sample.index} of case {sample.case!r} appears twice (also in {seen[key]})",
                    path=str(path),
                )
            seen[key] = path
            samples.append(sample)
    return samples


def cases_of_samples(
    loaded: LoadedSuite, samples: Sequence[Sample], requested: Mapping[str, int] | None = None, *, source: str | None
) -> ScoredSamples:
    """The suite's cases that have samples, and each one's N.

    N is the one the samples were drawn with: `requested` (from shard reports, where `--samples` may
    have overridden the suite), at least one more than the highest sample index seen.
    """
    all_cases = loaded.resolved_cases()
    present = {s.case for s in samples}
    cases = [c for c in all_cases if c.id in present]
    notes = []
    unknown = sorted(present - {c.id for c in all_cases})
    if unknown:
        notes.append(f"warning: samples of cases not in the suite ignored: {', '.join(unknown)}")
    absent = [c.id for c in all_cases if c.id not in present]
    if absent:
        notes.append(f"note: no samples for {len(absent)} case(s): {', '.join(absent)}")
    if not cases:
        raise BadInput("no samples of any case of the suite", path=source)
    last_index: dict[str, int] = defaultdict(int)
    for sample in samples:
        last_index[sample.case] = max(last_index[sample.case], sample.index)
    asked = requested or {}
    n = {c.id: max(asked.get(c.id, c.samples), 1 + last_index[c.id]) for c in cases}
    return ScoredSamples(list(samples), cases, n, tuple(notes))


# --- merging shards -----------------------------------------------------------------------------


def check_shards(reports: Sequence[tuple[str, Report]]) -> None:
    """Every shard of one matrix, once each: otherwise the verdict would look whole and not be.

    A missing shard is a failure to measure (its job died); anything else that does not fit is bad input.
    """
    names = {report.suite.name for _, report in reports}
    if len(names) > 1:
        raise BadInput(f"the reports come from different suites: {', '.join(sorted(names))}")
    shards = _shards_by_label(reports)
    counts = {shard.count for shard in shards}
    if len(counts) > 1:
        found = ", ".join(str(shard) for shard in sorted(shards, key=lambda s: (s.count, s.index)))
        raise BadInput(f"the reports come from different shardings ({found}): merge the shards of one matrix")
    for shard, found_in in shards.items():
        if len(found_in) > 1:
            raise BadInput(f"shard {shard} has {len(found_in)} reports ({', '.join(found_in)}): keep one per shard")
    count = counts.pop() if counts else 0
    missing = [str(Shard(k, count)) for k in range(1, count + 1) if Shard(k, count) not in shards]
    if missing:
        raise CannotMeasure(
            f"no report of shard {', '.join(missing)} among the reports given: did that job fail before "
            "writing it, or its artifact upload? The verdict must cover the whole suite"
        )


def _shards_by_label(reports: Sequence[tuple[str, Report]]) -> dict[Shard, list[str]]:
    shards: dict[Shard, list[str]] = defaultdict(list)
    for path, report in reports:
        label = report.run.sampling.shard if report.run.sampling is not None else None
        if not label:
            raise BadInput(
                "the report of a whole run, not of a shard: `merge` joins `run --shard K/N` reports", path=path
            )
        try:
            shards[Shard.parse(label, name="shard")].append(path)
        except BadInput as exc:
            raise BadInput(f"unreadable shard {label!r} in the report", path=path) from exc
    return shards


def merged_sampling(reports: Iterable[Report]) -> SamplingFacts:
    """The sampling facts of the whole run, from every shard's (requests, retries, stops, failures)."""
    return SamplingFacts.merged([r.run.sampling for r in reports if r.run.sampling is not None])


def shard_sample_counts(reports: Iterable[Report]) -> dict[str, int]:
    """N per case as the shard jobs ran it (`--samples` may have overridden the suite's)."""
    return {case.id: case.measurement.samples_requested for report in reports for case in report.cases}


def samples_file_of(report: Report, report_path: Path) -> Path:
    """The samples file a shard report names, read only beside the report, by its name.

    The report may come from another job (an artifact a fork's run uploaded): a path it names is
    never opened as written, or a report naming /etc/passwd would show that file's text in the
    merged report (docs/design.md §15)."""
    recorded = report.run.sampling.samples_file if report.run.sampling is not None else None
    if not recorded:
        raise BadInput("the report names no samples file: run the shard with --samples-out", path=str(report_path))
    name = PurePath(recorded.replace("\\", "/")).name
    beside = report_path.parent / name
    if name in ("", ".", "..") or not beside.is_file():
        raise BadInput(
            f"its samples file {name or recorded!r} is not beside the report (merge reads each shard's samples "
            "file from the report's own directory, by name)",
            path=str(report_path),
        )
    # The gate writes these as files: a link committed in their place could lead anywhere, and `merge`
    # reads every one of them (docs/design.md §15).
    for companion, what in ((beside, "samples file"), (judgments_path(beside), "judgments file")):
        if companion.is_symlink():
            raise BadInput(f"its {what} {companion.name!r} beside the report is a symbolic link", path=str(report_path))
    return beside
