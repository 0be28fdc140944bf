"""Small values the command line, the Action and the library share: a shard, the default baseline path."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Shard:
    """`--shard K/N`: the K-th (1-based) of N balanced shares of a suite's cases."""

    index: int  # K
    count: int  # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def default_baseline_path(suite: Path) -> Path:
    """`.stability/suite.yml` -> `.stability/suite.baseline.json` (docs/design.md, "Command line")."""
    return suite.with_suffix(".baseline.json")
