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

from stabilitygate.metrics import MAX_SAMPLES
from stabilitygate.typed_json import JSON, Finite, json_schema

__all__ = [
    "MAX_LABEL_CHARS",
    "MAX_NAME_CHARS",
    "MAX_TOKEN_COUNT",
    "Sample",
    "TokenCount",
    "TokenLogprob",
    "samples_schema",
]

#: The bounds of what a reply brings (docs/design.md §15, "What the gate writes, it reads back"): the
#: sampler refuses a reply past them, or cuts its labels, and the samples file's reader holds them too,
#: so that no report, baseline or merge of the gate's own is refused by its readers.
#: Tokens a reply may count in one usage field: far past any context window, far below what a report
#: may hold summed over every sample.
MAX_TOKEN_COUNT = 10**9
#: A finish reason ("stop", "length", "tool_calls", "content_filter"): a label, not a text.
MAX_LABEL_CHARS = 64
#: A model name, a system fingerprint, a usage key.
MAX_NAME_CHARS = 200

SampleIndex = Annotated[int, Field(ge=0, lt=MAX_SAMPLES, strict=True)]
TokenCount = Annotated[int, Field(ge=0, le=MAX_TOKEN_COUNT, strict=True)]
Label = Annotated[str, Field(max_length=MAX_LABEL_CHARS)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]


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
    index: SampleIndex  # below MAX_SAMPLES: no run draws more
    text: str | None  # None when the sample failed
    error: str | None = None  # why it failed, redacted
    latency_ms: Finite | None = None
    fingerprint: Name | None = None
    model: Name | None = None
    usage: Mapping[Name, TokenCount] | None = None
    finish_reason: Label | None = None
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
