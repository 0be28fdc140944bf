"""What the command line (or the Action) asks the pipeline to do, as plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

FailOn = Literal["regression", "fail", "never"]


@dataclass(frozen=True)
class OutputOptions:
    """Where the judged run goes: baseline and report files, and what fails the gate."""

    baseline: Path | None = None  # None: the suite's path with .baseline.json
    update_baseline: bool = False
    report_json: Path | None = None
    markdown: Path | None = None
    junit: Path | None = None
    fail_on: FailOn = "regression"


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based K of K/N
    count: int  # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class RunOptions:
    suite: Path
    output: OutputOptions
    samples: int | None = None
    concurrency: int | None = None
    case_ids: tuple[str, ...] = ()
    shard: Shard | None = None
    samples_out: Path | None = None
    progress: bool | None = None  # None: a bar on a terminal, plain lines in a CI log
    early_stop: bool | None = None  # None: the suite's sampling.early_stop


def default_baseline_path(suite: Path) -> Path:
    """`.stability/suite.yml` -> `.stability/suite.baseline.json` (DESIGN section 3)."""
    return suite.with_suffix(".baseline.json")
