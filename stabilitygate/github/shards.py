"""A suite spread over a matrix: `shard: K/N` jobs each measure a share, one `merge` job judges the whole.

A shard's verdict is provisional, so a shard job only reports its share (no comment, no
annotations); the merge job joins the shards' reports and does everything a whole run does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from stabilitygate.errors import BadInput, GateError
from stabilitygate.github.gate import GateFiles, GateOutcome
from stabilitygate.github.inputs import ActionInputs, match_reports
from stabilitygate.github.reporting import annotate_failure, fallback_summary, set_outputs, write_summary
from stabilitygate.pipeline.options import Shard
from stabilitygate.pipeline.score import check_shards
from stabilitygate.report.markdown import render_markdown
from stabilitygate.report.model import Report
from stabilitygate.report.read import read_report
from stabilitygate.secrets import Secrets
from stabilitygate.version import TOOL_NAME

# A shard's exit code says only whether it measured; the merge job gates.
SHARD_PASSES = (0, 1)


def merge_inputs(inputs: ActionInputs, workdir: Path, files: GateFiles) -> list[str]:
    """The shard reports `merge` names, relative to the working directory (none unless merging)."""
    if not inputs.merge:
        return []
    ours = {path.resolve() for path in files.all()}  # a broad glob must not take an earlier merge's report
    found = [path for path in match_reports(inputs.merge, workdir) if (workdir / path).resolve() not in ours]
    if not found:
        raise BadInput(f"input `merge`: {' or '.join(inputs.merge)} matches only this job's own report files")
    return found


def merge_problem(paths: Sequence[str], suite_name: str | None) -> GateError | None:
    """Why these reports cannot make one report of the whole suite; None when they can."""
    reports = [(p, r) for p in paths if (r := _readable_report(Path(p))) is not None]
    # unreadable files are left to the merge itself, which names them (exit 2)
    for path, report in reports:
        name = report.suite.name
        if suite_name is not None and name != suite_name:
            return BadInput(
                f"{path} reports on suite {name!r}, but input `suite` is {suite_name!r}: give the merge job "
                "the suite and working-directory of the shard jobs"
            )
    try:
        check_shards(reports)
    except GateError as exc:
        return exc
    return None


def _readable_report(path: Path) -> Report | None:
    try:
        return read_report(path)
    except BadInput:
        return None


def announce_shard(shard: Shard, update_baseline: bool) -> None:
    print(
        f"{TOOL_NAME}: shard {shard}: this job measures its share of the suite only, so it posts no comment "
        "and no annotations, and fails only on bad input (exit 2) or when it cannot measure (exit 3). "
        "The job with input `merge` judges the whole suite and comments.",
        flush=True,
    )
    if update_baseline:
        print(f"{TOOL_NAME}: update-baseline: the merge job records the baseline; a shard leaves it alone", flush=True)


def report_shard(
    shard: Shard, environ: Mapping[str, str], files: GateFiles, outcome: GateOutcome, secrets: Secrets
) -> int:
    """Summary and outputs of one shard; its exit code: 0 unless it had bad input (2) or could not measure (3)."""
    report, code = outcome.report, outcome.code
    annotate_failure(outcome, secrets)
    markdown = render_markdown(report) if report is not None else None
    note = (
        f"> **Shard {shard}** of the suite: the verdicts below are provisional. The merge job judges the "
        "whole suite (the run's correction runs over every case) and posts the comment.\n\n"
    )
    write_summary(note + (markdown if markdown is not None else fallback_summary(code, outcome.tail, secrets)), environ)
    set_outputs(files, report, report.failing_cases if report is not None else (), environ)
    return 0 if code in SHARD_PASSES else code
