"""The Sample record: one line of the samples JSONL (docs/design.md §8, "Files"), typed for reading.

`sampling/samples_file.py` reads a line with `typed_json.from_json(Sample, ...)`; these annotations
are what it accepts, and `schema/samples.schema.json` is generated from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, astuple, dataclass
from typing import Annotated

from pydantic import Field, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from stabilitygate.typed_json import JSON, Count, Finite, Integer, json_schema

__all__ = ["Sample", "TokenLogprob", "samples_schema"]


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token with its log-probability and the best alternative's (for near-tie diagnostics).

    In the samples file it is the array [token, logprob, runner_up, runner_up_logprob] (the last two
    may be left out); a logprob that is not finite is written as null (JSON has no -inf).
    """

    token: str
    logprob: float | None
    runner_up: str | None = None
    runner_up_logprob: float | None = None

    @classmethod
    def __get_pydantic_core_schema__(cls, source: object, handler: GetCoreSchemaHandler) -> CoreSchema:
        def optional(kind: object) -> CoreSchema:
            return core_schema.with_default_schema(handler.generate_schema(kind), default=None)

        items = [handler.generate_schema(str), handler.generate_schema(Finite | None)]
        compact = core_schema.tuple_schema([*items, optional(str | None), optional(Finite | None)], min_length=2)
        return core_schema.no_info_after_validator_function(lambda fields: cls(*fields), compact)


@dataclass(frozen=True)
class Sample:
    """One sample of a case: its completion, or why it failed; one line of the samples file."""

    case: Annotated[str, Field(min_length=1)]
    index: Count
    text: str | None  # None when the sample failed
    error: str | None = None  # why it failed, redacted
    latency_ms: Finite | None = None
    fingerprint: str | None = None
    model: str | None = None
    usage: Mapping[str, Integer] | None = None
    finish_reason: str | None = None
    attempts: Annotated[int, Field(ge=1, strict=True)] = 1
    logprobs: tuple[TokenLogprob, ...] | None = None  # of the generated tokens

    @property
    def ok(self) -> bool:
        return self.text is not None

    def to_json(self) -> dict[str, JSON]:
        """The samples file's line, its keys in field order (a line is read by eye, and diffed)."""
        data: dict[str, JSON] = asdict(self)
        if self.logprobs is None:
            del data["logprobs"]
        else:
            data["logprobs"] = [list(astuple(token)) for token in self.logprobs]
        return data


def samples_schema() -> dict[str, JSON]:
    """The published JSON Schema of one line of the samples file, generated from `Sample`."""
    return json_schema(Sample, title="One line of a stabilitygate samples file (--samples-out)")
