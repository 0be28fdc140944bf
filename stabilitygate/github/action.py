"""The GitHub Action: INPUT_* variables in, the gate run, then annotations, summary, outputs, comment.

The gate's exit code is the action's exit code, whatever happens to the comment or the summary:
those are reporting, and a reporting failure becomes a warning, never a different verdict.

A big suite spreads over a matrix: each `shard: K/N` job runs its share and only reports it (its
verdict is provisional, so no comment and no annotations), then one `merge` job joins the shards'
reports and does everything a whole run does.

The pieces: `gate` calls the library in-process with the suite loaded once, `reporting` turns its
Report into annotations, summary, outputs and comment, `shards` handles a matrix's shard and merge
jobs; `comment_from` renders and posts a report another job wrote (the fork-safe pair). Every
path the job reads or writes is confined to the workspace (`paths`), and whatever stops it, a bad
input included, ends in one annotation and the job summary (`failures`), with nothing posted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from stabilitygate.cases import load_suite, secret_env_names
from stabilitygate.errors import EXIT_BAD_INPUT, BadInput
from stabilitygate.failures import Failure, guarded, sigterm_interrupts
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.comment_from import comment_from_report
from stabilitygate.github.gate import OUT_DIR, GateFiles, GateOutcome, call_library, run_gate
from stabilitygate.github.inputs import ActionInputs, read_inputs
from stabilitygate.github.ownership import give_back
from stabilitygate.github.paths import confine_inputs, confined, refuse_links, working_directory, workspace_of
from stabilitygate.github.reporting import SuiteInfo, error_outputs, fallback_summary, report_run, write_summary
from stabilitygate.github.shards import announce_shard, merge_inputs, merge_problem, report_shard
from stabilitygate.pipeline.options import default_baseline_path
from stabilitygate.secrets import Secrets, collect_secrets, redact
from stabilitygate.version import TOOL_NAME

if TYPE_CHECKING:
    from stabilitygate.suite.load import LoadedSuite


def main(environ: Mapping[str, str]) -> int:
    """Run the action; return the gate's exit code (0 pass, 1 fail, 2 bad input, 3 could not measure).

    `environ` supplies the action's inputs and the runner's GITHUB_* variables; the gate's providers
    read API keys from the same mapping.
    """
    token = environ.get("INPUT_GITHUB-TOKEN")
    masks = _Masks()
    masks.add(collect_secrets((), environ, github_token=token))  # before anything can print them
    with sigterm_interrupts():
        outcome = guarded(
            lambda: _run(environ, masks), lambda failure: _report_failure(failure, environ, masks), environ
        )
    return outcome.code if isinstance(outcome, Failure) else outcome


def _run(environ: Mapping[str, str], masks: _Masks) -> int:
    inputs = read_inputs(environ)
    workspace = workspace_of(environ.get("GITHUB_WORKSPACE") or os.getcwd())
    workdir = working_directory(workspace, inputs.working_directory)
    files = GateFiles.under(workspace, inputs.shard)
    confine_inputs(inputs, workspace, workdir, files)
    refuse_links(workspace / OUT_DIR, workspace)  # before anything is written (or deleted) there
    reports = merge_inputs(inputs, workdir, files)
    for report in reports:
        confined(workspace, workdir, report, named="input `merge`")
    os.chdir(workdir)
    if inputs.comment_from:
        return comment_from_report(inputs, environ, masks.secrets)
    started = time.time()
    for stale in files.all():  # an earlier step's report must never be read as this run's
        stale.unlink(missing_ok=True)
    try:
        outcome = _gate(inputs, environ, workspace, files, reports, masks)
        if inputs.shard is not None:
            return report_shard(inputs.shard, environ, files, outcome, masks.secrets)
        report_run(inputs, environ, files, outcome, _suite_info(outcome, workspace, inputs), masks.secrets)
        return outcome.code
    finally:
        _give_back_files(files, inputs, started)


def _gate(
    inputs: ActionInputs,
    environ: Mapping[str, str],
    workspace: Path,
    files: GateFiles,
    reports: list[str],
    masks: _Masks,
) -> GateOutcome:
    """Load the suite once, then run (or merge) it through the library."""
    loaded = _load_suite(inputs.suite, workspace)
    if isinstance(loaded, BadInput):
        return GateOutcome(None, loaded.exit_code, [f"{TOOL_NAME}: error: {loaded}"])
    named = secret_env_names([*loaded.cases, *loaded.variant_cases()])  # a variant may name a key of its own
    masks.add(collect_secrets(named, environ, github_token=inputs.github_token))
    if inputs.shard is not None:
        announce_shard(inputs.shard, inputs.update_baseline)
    problem = merge_problem(reports, loaded.suite.name) if inputs.merge else None
    if problem is not None:
        wc.error(str(problem), title=f"{TOOL_NAME}: cannot merge the shards")
        return GateOutcome(None, problem.exit_code, [f"{TOOL_NAME}: error: {problem}"])
    return run_gate(lambda: call_library(inputs, loaded, files, reports, environ), files)


class _Masks:
    """The secret values masked in this job's log so far; every text the Action reports is redacted with them."""

    def __init__(self) -> None:
        self.secrets = Secrets()

    def add(self, found: Secrets) -> None:
        for value in sorted(found.values - self.secrets.values):
            wc.add_mask(value)
        self.secrets = self.secrets | found


def _report_failure(failure: Failure, environ: Mapping[str, str], masks: _Masks) -> None:
    """What stopped the job before the gate ran (a bad input, mostly): an annotation and the job summary."""
    title = f"{TOOL_NAME}: bad input" if failure.code == EXIT_BAD_INPUT else TOOL_NAME
    wc.error(redact(failure.line.removeprefix("error: "), masks.secrets), title=title)
    if failure.traceback:
        print(redact(failure.traceback, masks.secrets), flush=True)
    write_summary(fallback_summary(failure.code, [f"{TOOL_NAME}: {failure.line}"], masks.secrets), environ)
    error_outputs(environ)


def _load_suite(suite: str, workspace: Path) -> LoadedSuite | BadInput:
    """The suite, loaded once for the whole job; a bad one is annotated at its line and returned as the error."""
    try:
        return load_suite(suite)
    except BadInput as exc:
        message = str(exc).removeprefix(f"{exc.path}:{exc.line}: ").removeprefix(f"{exc.path}: ")
        shown = _workspace_relative(Path(suite), workspace)
        wc.error(message, file=shown, line=exc.line, title=f"{TOOL_NAME}: invalid suite")
        return exc


def _suite_info(outcome: GateOutcome, workspace: Path, inputs: ActionInputs) -> SuiteInfo | None:
    """Where annotations point: the suite file, relative to the repository root, and its case lines."""
    if outcome.report is None:
        return None
    lines = {c.id: c.line for c in outcome.report.cases if c.line is not None}
    return SuiteInfo(_workspace_relative(Path(inputs.suite), workspace), lines, outcome.report.suite.name)


def _workspace_relative(path: Path, workspace: Path) -> str:
    """The path as annotations need it: relative to the repository root (the workspace)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _give_back_files(files: GateFiles, inputs: ActionInputs, started: float) -> None:
    baseline = Path(inputs.baseline) if inputs.baseline else default_baseline_path(Path(inputs.suite))
    cache = Path(inputs.embedding_cache).expanduser() if inputs.embedding_cache else files.embedding_cache
    written = [files.report_json.parent, baseline, cache]
    try:
        give_back(written, files.workspace, since=started)
    except OSError as exc:
        wc.warning(f"could not give the written files back to the workspace owner: {exc}", title=TOOL_NAME)
