"""Small values the command line, the Action and the library share: a shard, the default suite and baseline paths."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from stabilitygate.errors import BadInput

#: The suite every command and the Action read when given none (docs/design.md §3).
DEFAULT_SUITE = ".stability/suite.yml"
#: The providers `stabilitygate init` writes a starter suite for (pipeline/starter.py).
StarterProvider = Literal["openai", "anthropic", "local"]
STARTER_PROVIDERS: tuple[StarterProvider, ...] = get_args(StarterProvider)


@dataclass(frozen=True)
class Shard:
    """`--shard K/N`: the K-th (1-based) of N balanced shares of a suite's cases."""

    index: int  # K
    count: int  # N

    @classmethod
    def parse(cls, text: str, *, name: str) -> Shard:
        """`K/N` with 1 <= K <= N, spaces allowed around the numbers; else BadInput naming `name` (the
        flag, the input or the report field it came from)."""
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise BadInput(f"{name}: expected K/N with 1 <= K <= N, such as 2/3, got {text!r}")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def default_baseline_path(suite: Path) -> Path:
    """`.stability/suite.yml` -> `.stability/suite.baseline.json` (docs/design.md, "Command line")."""
    return suite.with_suffix(".baseline.json")
