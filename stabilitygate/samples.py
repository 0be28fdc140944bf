"""The Sample record: one line of the samples JSONL (docs/design.md §8, "Files")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Sample:
    case: str
    index: int
    text: str | None  # None when the sample failed
    error: str | None = None  # why it failed, redacted
    latency_ms: float | None = None
    fingerprint: str | None = None
    model: str | None = None
    usage: Mapping[str, int] | None = None
    finish_reason: str | None = None
    attempts: int = 1
    # Compact logprobs of the generated tokens: [[token, logprob, runner_up, runner_up_logprob], ...]
    logprobs: tuple[tuple[Any, ...], ...] | None = None

    @property
    def ok(self) -> bool:
        return self.text is not None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if data["logprobs"] is None:
            del data["logprobs"]
        else:
            data["logprobs"] = [list(t) for t in self.logprobs or ()]
        return data
