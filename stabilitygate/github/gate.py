"""Running the gate for the Action: the files it writes, and the library call with model text unable to issue commands.

The Action calls `stabilitygate.run` / `merge` in-process with the suite it loaded once; errors keep
the command line's exit codes and one-line messages (docs/design.md, "The GitHub Action").
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, TypedDict

from stabilitygate.failures import Failure, guarded
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.inputs import ActionInputs
from stabilitygate.judge.fail_on import FailOn
from stabilitygate.log import log_to_stderr
from stabilitygate.pipeline.options import Shard
from stabilitygate.report.console import summary_lines
from stabilitygate.report.files import ReportFiles, write_report_files
from stabilitygate.report.model import Report
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.version import TOOL_NAME

OUT_DIR = ".stabilitygate"


@dataclass(frozen=True)
class GateFiles:
    """The files the gate writes, absolute, and as later steps see them (relative to the workspace)."""

    workspace: Path
    report_json: Path
    markdown: Path
    junit: Path
    samples: Path

    @classmethod
    def under(cls, workspace: Path, shard: Shard | None = None) -> GateFiles:
        """`.stabilitygate/`, or for a shard `.stabilitygate/shard-K-of-N/`, which an artifact upload can take."""
        out = workspace / OUT_DIR
        if shard is not None:
            out = out / f"shard-{shard.index}-of-{shard.count}"
        return cls(workspace, out / "report.json", out / "report.md", out / "junit.xml", out / "samples.jsonl")

    @property
    def embedding_cache(self) -> Path:
        """In the workspace, so actions/cache can keep it and the owner gets it back (not root's HOME)."""
        return self.workspace / OUT_DIR / "embeddings"

    def all(self) -> tuple[Path, ...]:
        return (self.report_json, self.markdown, self.junit, self.samples)

    def report_files(self) -> ReportFiles:
        return ReportFiles(self.report_json, self.markdown, self.junit)

    def shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()


@dataclass(frozen=True)
class GateOutcome:
    """What the gate did: its report (None when it stopped before one), exit code and last log lines,
    and, without a report, the one line that says why (for the job's annotation)."""

    report: Report | None
    code: int
    tail: list[str]
    failure: str | None = None


class _Tee:
    """Passes writes through to a stream and keeps the last lines (for the summary of a failed run)."""

    def __init__(self, stream: TextIO, keep: int = 40) -> None:
        self.stream = stream
        self.keep = keep
        self.lines: list[str] = []
        self._partial = ""

    def write(self, text: str) -> int:
        self.stream.write(text)
        parts = (self._partial + text).split("\n")
        self._partial = parts.pop()
        self.lines = (self.lines + parts)[-self.keep :]
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def tail(self) -> list[str]:
        return [*self.lines, self._partial] if self._partial else list(self.lines)


class JudgingOptions(TypedDict):
    """The library's judging keywords, as `run` and `merge` take them."""

    baseline: str | None
    update_baseline: bool
    fail_on: FailOn
    embedding_cache: str | Path
    accept_baseline_suite: str | None


def judging_options(inputs: ActionInputs, files: GateFiles) -> JudgingOptions:
    """The keywords run and merge share: baseline (and another suite's name it may carry), whether to
    record it, what fails, the embedding cache."""
    return {
        "baseline": inputs.baseline,
        # A shard's share is recorded by the merge job, which sees the whole suite.
        "update_baseline": inputs.update_baseline and inputs.shard is None,
        "fail_on": inputs.fail_on,
        "embedding_cache": inputs.embedding_cache or files.embedding_cache,
        "accept_baseline_suite": inputs.accept_baseline_suite,
    }


def call_library(
    inputs: ActionInputs, loaded: LoadedSuite, files: GateFiles, reports: list[str], environ: Mapping[str, str]
) -> Report:
    """The one library call this job makes: a run (or a shard of one), or the merge of shard reports."""
    from stabilitygate import api

    judging = judging_options(inputs, files)
    if inputs.merge:
        return api.merge(reports, suite=loaded, **judging)
    return api.run(
        loaded,
        **judging,
        samples=inputs.samples,
        shard=inputs.shard,
        samples_out=files.samples,
        progress=False,
        changed_only=inputs.changed_only,
        environ=environ,
        variants=inputs.variants,
    )


def run_gate(call: Callable[[], Report], files: GateFiles) -> GateOutcome:
    """Run the gate and write its files, model text unable to issue workflow commands meanwhile.

    Completions are untrusted: between `::stop-commands::` and its resume token, `::` lines in the
    log are not commands. The runner orders lines only within one stream (it handles each batch's
    stderr before its stdout), so everything the gate prints while it runs, stderr included, goes to
    stdout, the stream of the tokens and of every command the Action writes before and after.
    """
    log_to_stderr()
    tee = _Tee(sys.stdout)
    with wc.commands_paused(sys.stdout), contextlib.redirect_stdout(tee), contextlib.redirect_stderr(tee):
        outcome = _run_reporting_errors(lambda: _run_and_write(call, files, tee), tee)
    if isinstance(outcome, Failure):
        return GateOutcome(None, outcome.code, tee.tail(), outcome.line)
    return GateOutcome(outcome, outcome.exit_code, tee.tail())


def _run_and_write(call: Callable[[], Report], files: GateFiles, tee: _Tee) -> Report:
    report = call()
    write_report_files(report, files.report_files())
    for line in summary_lines(report):
        print(line, file=tee)
    return report


def _run_reporting_errors(call: Callable[[], Report], tee: _Tee) -> Report | Failure:
    """The report, or the Failure that stopped it after printing its one line."""

    def say(failure: Failure) -> None:
        print(f"{TOOL_NAME}: {failure.line}", file=tee)
        if failure.traceback:
            print(failure.traceback, file=tee)

    return guarded(call, say)
