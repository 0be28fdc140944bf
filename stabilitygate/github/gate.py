"""Running the gate for the action: the files it writes, its command line, and the run itself.

The gate runs in-process through its CLI, so its exit codes and messages are exactly the command line's.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from stabilitygate import TOOL_NAME
from stabilitygate.errors import EXIT_CANNOT_MEASURE
from stabilitygate.github.inputs import ActionInputs
from stabilitygate.pipeline.options import Shard

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

    def all(self) -> tuple[Path, ...]:
        return (self.report_json, self.markdown, self.junit, self.samples)

    def shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()


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


def gate_argv(inputs: ActionInputs, files: GateFiles, reports: Sequence[str] = ()) -> list[str]:
    argv = [
        "merge" if inputs.merge else "run",
        "--report-json",
        str(files.report_json),
        "--markdown",
        str(files.markdown),
        "--junit",
        str(files.junit),
        "--fail-on",
        inputs.fail_on,
    ]
    if inputs.baseline:
        argv += ["--baseline", inputs.baseline]
    if inputs.update_baseline and inputs.shard is None:  # a shard's share is recorded by the merge job
        argv.append("--update-baseline")
    if inputs.merge:
        # `--` ends the options, so no path is ever read as a flag.
        return [*argv, "--suite", inputs.suite, "--", *reports]
    argv += ["--samples-out", str(files.samples), "--no-progress"]
    if inputs.samples is not None:
        argv += ["--samples", str(inputs.samples)]
    if inputs.shard is not None:
        argv += ["--shard", str(inputs.shard)]
    return [*argv, "--", inputs.suite]


def run_gate(argv: Sequence[str]) -> tuple[int, list[str]]:
    """Run the command line, model text unable to issue workflow commands; return (code, stderr tail)."""
    from stabilitygate.cli import main as cli_main

    # Completions are untrusted: while the gate runs, `::` lines in its output are not commands.
    pause = secrets.token_hex(16)
    print(f"::stop-commands::{pause}", flush=True)
    tee = _Tee(sys.stderr)
    try:
        with contextlib.redirect_stderr(tee):
            code = cli_main(list(argv))
    except Exception as exc:  # the CLI maps its own errors; this is a last line of defence
        print(f"{TOOL_NAME}: internal error: {type(exc).__name__}: {exc}", file=tee)
        code = EXIT_CANNOT_MEASURE
    finally:
        sys.stderr.flush()
        print(f"::{pause}::", flush=True)
    return code, tee.tail()
