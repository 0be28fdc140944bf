"""The suite file as typed, immutable objects (docs/design.md §4, "The suite file").

pydantic does the type checking and generates the published JSON Schema; the YAML line numbers
that make error messages useful are attached by `suite.load`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from stabilitygate.conditions import Idempotency, Probe
from stabilitygate.metrics import MAX_SAMPLES
from stabilitygate.names import CASE_ID_PATTERN, MAX_CASE_ID_CHARS, MAX_SUITE_NAME_CHARS
from stabilitygate.patterns import compile_pattern
from stabilitygate.suite.expected import EXPECTED_JSON_SCHEMA, check_choice_expected, check_expected
from stabilitygate.suite.schema_loops import self_applying_loop
from stabilitygate.suite.strict import Strict
from stabilitygate.typed_json import JSON, JSONObject

Normalization = Literal["strip", "lower", "whitespace", "punctuation"]
Share = Annotated[float, Field(ge=0.0, le=1.0)]
DEFAULT_CLUSTER_COSINE = 0.95
#: `min_parsed` when the suite sets none: below half, no answer can hold a majority, so the answer-change
#: rule is blind and a parser that never matches would pass forever (docs/design.md §6, "Judging").
DEFAULT_MIN_PARSED = 0.5
VariantName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]


#: The type of a provider that names none: an OpenAI-compatible API.
DEFAULT_PROVIDER_TYPE = "openai"


class _Address:
    """The mark of a provider key that says where the provider is or what it may read, not what it answers."""


#: `Annotated[..., ADDRESS]` on a config key keeps it out of the provider's identity (`ProviderConfig.identity`).
ADDRESS = _Address()


@dataclass(frozen=True)
class Implied:
    """`Annotated[..., Implied(value)]`: the provider reads the key unset as `value`, so writing that
    value out is the same provider, and the key enters the identity only with another value."""

    value: object


#: Keys in every identity, None where the type has none: the definition hashes of existing baselines
#: were computed so, when every config had every key (docs/design.md §4, "The suite file").
ALWAYS_NAMED = ("body", "command", "completion_pointer")


class ProviderConfig(Strict):
    """What every provider's config has. Each provider type declares a subclass with its own keys
    (its `config_model`); the registry picks it by `type` (stabilitygate.providers.registry)."""

    type: str = Field(description="The provider type: openai, local, anthropic, http, command or a plugin's")
    model: str | None = Field(None, description="Model name sent to the API (local: a GGUF path or none)")
    params: JSONObject | None = Field(None, description="Passed through to the API unchanged")

    @field_validator("params", mode="before")
    @classmethod
    def _params_are_json(cls, value: object) -> object:
        return plain_json_params(value)

    def identity(self) -> dict[str, object]:
        """What decides this provider's answers: its type, model and params, and every key its type
        adds that is set (to other than its `Implied` value), without the keys marked `ADDRESS`. The
        definition hash and the judgment key are made of it, so a plugin's keys count like a built-in's."""
        own = {
            name: value
            for name, value in self.model_dump(mode="json", exclude_none=True).items()
            if name not in ("type", "model", "params") and not self._outside_identity(name, value)
        }
        return {
            "type": self.type,
            "model": self.model,
            "params": self.params or {},
            **dict.fromkeys(ALWAYS_NAMED),
            **own,
        }

    @classmethod
    def _outside_identity(cls, name: str, value: object) -> bool:
        marks = cls.model_fields[name].metadata
        return ADDRESS in marks or any(isinstance(m, Implied) and m.value == value for m in marks)

    def endpoint(self) -> str | None:
        """The URL the provider sends its requests to; None for a provider that sends none."""
        return None

    @staticmethod
    def merged(default: Mapping[str, object], override: Mapping[str, object] | None) -> dict[str, object]:
        """The raw mapping of a case's provider: the suite's with every key the case sets replaced
        (params merged key by key). The result is validated by the config model of its type.

        A key set to null counts as not set, in either mapping."""
        default, override = _without_nulls(default), _without_nulls(override or {})
        if not override:
            return default
        data = {} if ProviderConfig.changes_type(default, override) else default
        inherited, own = data.get("params"), override.get("params")
        if isinstance(inherited, Mapping) and isinstance(own, Mapping):
            override = {**override, "params": {**inherited, **own}}
        return {**data, **override}

    @staticmethod
    def changes_type(default: Mapping[str, object], override: Mapping[str, object] | None) -> bool:
        """Whether the override is another kind of provider, which shares nothing with the default.

        A case's `type: openai` under a default without `type` counts as another kind too: the
        definition hashes of existing suites depend on it."""
        default, override = _without_nulls(default), _without_nulls(override or {})
        return override.get("type", default.get("type")) != default.get("type")


def plain_json_params(value: object) -> object:
    """`params` as they are, when they are plain JSON values; else a ValueError saying so."""
    # YAML has values JSON has not (dates, sets): the API would choke on them mid-run.
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"params must be plain JSON values (quote dates and the like): {exc}") from exc
    return value


def _without_nulls(mapping: Mapping[str, object]) -> dict[str, object]:
    return {key: value for key, value in mapping.items() if value is not None}


#: A provider as the file writes it. The suite's is complete, a case's may set any part of it; each
#: case's merged mapping is validated by the config model of its type (see `stabilitygate.cases`).
ProviderMapping = Annotated[dict[str, object], Field(description="Where completions come from (keys depend on type)")]


class Equivalence(Strict):
    """How two completions are judged to mean the same; without it, by cosine (docs/design.md §5)."""

    judge: ProviderMapping = Field(
        description="A provider block (as `provider:`): the model asked whether one completion entails the "
        "other, in both orders; one meaning when each does"
    )


class Sampling(Strict):
    samples: int = Field(10, ge=2, le=MAX_SAMPLES, description="Samples per case (N)")
    concurrency: int = Field(8, ge=1, le=1024, description="Requests in flight, over the whole run")
    timeout_s: float = Field(60.0, gt=0, le=3600, description="Per-request timeout")
    retries: int = Field(5, ge=0, le=50, description="Retries of one sample on 429, 5xx, timeouts")
    max_retry_wait_s: float = Field(60.0, gt=0, le=3600, description="Longest single backoff or Retry-After")
    max_requests: int | None = Field(
        None, ge=1, description="Cap on requests for the whole run, retries included (default 3 x N x cases)"
    )
    baseline_samples: int | None = Field(
        None,
        ge=2,
        le=MAX_SAMPLES,
        description="Samples per case that --update-baseline draws (default 5 x samples: a baseline is paid once)",
    )
    max_samples: int | None = Field(
        None,
        ge=2,
        le=MAX_SAMPLES,
        description="Most samples per case when its checks leave it inconclusive (default 2.5 x samples, "
        "against a baseline of at least twice this; samples: no second stage)",
    )
    early_stop: bool = Field(True, description="Stop sampling a case once it has certainly failed")
    canaries: int = Field(
        0, ge=0, description="With --changed-only: also re-measure this many unchanged cases, picked from the commit"
    )
    idempotency: Idempotency = Field(
        "per_sample",
        description="shared: one idempotency key for all of a case's samples (the case must come back with one "
        "completion); per_sample: one key per sample",
    )
    probe: Probe | None = Field(
        None,
        description="concurrency: draw half of each case's samples one at a time and half under load, and "
        "test whether the answers differ (reported, never failing the gate)",
    )


class Embedding(Strict):
    enabled: bool = Field(True, description="false turns the semantic layer off")
    model: str = Field("all-MiniLM-L6-v2", description="The offline sentence-transformers model")
    batch_size: int = Field(32, ge=1, le=4096)


#: The thresholds' names: the keys of `thresholds:` (a test holds them to `Thresholds`' fields).
ThresholdName = Literal[
    "max_unique",
    "min_mode_share",
    "min_agreement",
    "min_parsed",
    "min_cosine",
    "max_semantic_clusters",
    "min_accuracy",
    "min_schema_valid",
    "max_sample_errors",
]


class Thresholds(Strict):
    max_unique: int | None = Field(None, ge=1, description="Most distinct completions allowed")
    min_mode_share: Share | None = None
    min_agreement: Share | None = Field(None, description="Least parsed_agreement allowed")
    min_parsed: Share | None = Field(
        None,
        description="Least share of samples whose answer parsed, for cases with a parser (default 0.5; 0 turns it off)",
    )
    min_cosine: Share | None = Field(
        None, description="Least cosine_min allowed; also the clustering bar (0.95 when unset)"
    )
    max_semantic_clusters: int | None = Field(None, ge=1)
    min_accuracy: Share | None = None
    min_schema_valid: Share | None = Field(None, description="Least share of samples satisfying `schema`")
    max_sample_errors: int | None = Field(
        None, ge=0, description="More failed samples than this makes the case `error` (default: half of N)"
    )

    def merged(self, override: Thresholds | None) -> Thresholds:
        if override is None:
            return self
        return Thresholds(**{**self.model_dump(exclude_none=True), **override.model_dump(exclude_none=True)})

    @property
    def cluster_cosine(self) -> float:
        return DEFAULT_CLUSTER_COSINE if self.min_cosine is None else self.min_cosine

    @property
    def parsed_floor(self) -> float:
        """`min_parsed` as judged: the suite's, else DEFAULT_MIN_PARSED."""
        return DEFAULT_MIN_PARSED if self.min_parsed is None else self.min_parsed


class Regression(Strict):
    alpha: float = Field(0.05, gt=0, lt=1, description="Family-wise false-failure rate, over every case and rule")
    min_drop: Share = Field(0.10, description="Least drop of the agreement metric that can regress")
    fail_on_answer_change: bool = True
    fail_on_semantic_drift: bool = True


class TextAnswer(Strict):
    normalize: list[Normalization] = Field(default_factory=list)


class NumberAnswer(Strict):
    decimal_comma: bool = Field(False, description="Read the comma as the decimal mark: 1,5 is 1.5, 1.234 is 1234")


#: The answer parsers (docs/design.md §4.1): an `answer:` sets exactly one of them.
ParserKind = Literal["json", "choice", "regex", "number", "text"]
PARSER_KINDS: tuple[ParserKind, ...] = get_args(ParserKind)


class AnswerSpec(Strict):
    """How to parse the answer out of a completion: exactly one parser, optionally a schema."""

    json_: str | None = Field(None, alias="json", description="RFC 6901 pointer; '' = whole document")
    choice: list[str] | None = Field(None, min_length=2, description="The labels, e.g. [A, B, C, D]")
    regex: str | None = Field(None, description="First group, else the whole match")
    number: NumberAnswer | Literal[True] | None = Field(None, description="true, or {decimal_comma: true}")
    text: TextAnswer | None = None
    schema_: JSONObject | None = Field(None, alias="schema", description="JSON Schema the answer must meet")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("number", mode="before")
    @classmethod
    def _number_shape(cls, value: object) -> object:
        """`true` or the options mapping, with one plain message for anything else."""
        if value is None or value is True:
            return value
        if not isinstance(value, dict):
            raise ValueError("expected true or {decimal_comma: true}")
        unknown = sorted(str(key) for key in value if key not in NumberAnswer.model_fields)
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r} (expected decimal_comma)")
        return NumberAnswer.model_validate(value)

    @model_validator(mode="after")
    def _exactly_one_parser(self) -> AnswerSpec:
        chosen = [k for k in ("json_", "choice", "regex", "number", "text") if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError("expected exactly one of json, choice, regex, number, text")
        if self.json_ is not None:
            _check_pointer(self.json_)
        if self.choice is not None:
            _check_labels(self.choice)
        if self.regex is not None:
            _check_regex(self.regex)
        if self.schema_ is not None:
            from jsonschema import Draft202012Validator, SchemaError

            try:
                Draft202012Validator.check_schema(self.schema_)
            except SchemaError as exc:
                raise ValueError(f"schema is not a valid JSON Schema: {exc.message}") from exc
            loop = self_applying_loop(self.schema_)
            if loop is not None:
                raise ValueError(
                    f"schema: the subschema at {loop} applies itself to the same value without end "
                    "(a $ref that leads back to itself); validating with it would never finish"
                )
        return self

    @property
    def kind(self) -> ParserKind:
        return next(k for k in PARSER_KINDS if self.spec_value(k) is not None)

    @property
    def decimal_comma(self) -> bool:
        return isinstance(self.number, NumberAnswer) and self.number.decimal_comma

    def spec_value(self, kind: str) -> object:
        return getattr(self, {"json": "json_", "schema": "schema_"}.get(kind, kind))


# A parser that can never find an answer, or finds one in every text, is exit 2 at its line: at run
# time it would fail every sample, or agree on nothing in every sample (docs/design.md §4.1).


def _check_pointer(pointer: str) -> None:
    if pointer and not pointer.startswith("/"):
        raise ValueError(
            f"json: {pointer!r} is not an RFC 6901 pointer, which starts with '/' ('' is the whole "
            f"document): write json: /{pointer}"
        )
    if re.search(r"~(?![01])", pointer):
        raise ValueError(
            f"json: {pointer!r} is not an RFC 6901 pointer: '~' must be followed by 0 or 1 (~0 is '~', ~1 is '/')"
        )


def _check_labels(labels: list[str]) -> None:
    seen: dict[str, str] = {}
    for label in labels:
        if not label.strip():
            raise ValueError("choice: an empty label names nothing: every label needs a character")
        first = seen.setdefault(label.lower(), label)
        if first != label or labels.count(label) > 1:
            raise ValueError(f"choice: {first!r} and {label!r} are one label (labels are matched ignoring case)")


def _check_regex(pattern: str) -> None:
    try:
        compiled = compile_pattern(pattern)
    except ValueError as exc:
        raise ValueError(f"regex does not compile: {exc}") from exc
    if compiled.search("") is not None:
        raise ValueError(
            f"regex: '{pattern}' matches the empty string, so it matches every completion, with an empty answer "
            "where nothing else fits: make it need at least one character (\\d+ rather than \\d*)"
        )


class Message(Strict):
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str


class Variant(Strict):
    """A named override of a case's provider, messages or parser, measured beside the case as written
    with `run --variants` (docs/design.md §16, "Remedies"); never judged, never in the baseline."""

    description: str | None = None
    provider: ProviderMapping | None = Field(None, description="Merged over the case's provider, as a case's is")
    params: JSONObject | None = Field(None, description="Merged into the provider's params, key by key")
    system: str | None = None
    prompt: str | None = None
    messages: list[Message] | None = Field(None, min_length=1)
    answer: AnswerSpec | None = Field(None, description="Replaces the case's parser")
    idempotency: Idempotency | None = None

    @field_validator("params", mode="before")
    @classmethod
    def _params_are_json(cls, value: object) -> object:
        return plain_json_params(value)

    @model_validator(mode="after")
    def _overrides_something(self) -> Variant:
        if not self.overrides:
            raise ValueError(
                "a variant must override something: provider, params, system, prompt, messages, answer or idempotency"
            )
        if self.messages is not None and (self.prompt is not None or self.system is not None):
            raise ValueError("`messages` replaces the case's prompt: it goes without `prompt` and `system`")
        return self

    @property
    def overrides(self) -> tuple[str, ...]:
        """The keys this variant sets, besides its description."""
        return tuple(key for key in self.model_fields_set - {"description"} if getattr(self, key) is not None)


Variants = dict[VariantName, Variant]


class Case(Strict):
    id: str = Field(pattern=CASE_ID_PATTERN, max_length=MAX_CASE_ID_CHARS)
    description: str | None = None
    system: str | None = None
    prompt: str | None = None
    messages: list[Message] | None = Field(None, min_length=1)
    answer: AnswerSpec | None = None
    expected: Annotated[JSON, WithJsonSchema(EXPECTED_JSON_SCHEMA)] = Field(
        None,
        title="Expected",  # pydantic gives a JSON value no title of its own: the published schema keeps it
        description="The correct answer, for accuracy: a value compared with the parsed answer, or with a "
        "text answer (or none) {contains: TEXT} or {regex: PATTERN}",
    )
    samples: int | None = Field(None, ge=2, le=MAX_SAMPLES, description="Overrides sampling.samples")
    baseline_samples: int | None = Field(None, ge=2, le=MAX_SAMPLES, description="Overrides sampling.baseline_samples")
    max_samples: int | None = Field(None, ge=2, le=MAX_SAMPLES, description="Overrides sampling.max_samples")
    thresholds: Thresholds | None = None
    provider: ProviderMapping | None = None
    equivalence: Equivalence | None = Field(None, description="Replaces the suite's `equivalence` for this case")
    idempotency: Idempotency | None = Field(None, description="Overrides sampling.idempotency")
    variants: Variants | None = Field(None, description="Variants of this case only (names unlike the suite's)")

    @field_validator("expected")
    @classmethod
    def _expected_fits_the_parser(cls, value: JSON, info: ValidationInfo) -> JSON:
        answer = info.data.get("answer")
        check_expected(answer.kind if isinstance(answer, AnswerSpec) else None, value)
        if isinstance(answer, AnswerSpec) and answer.choice is not None:
            check_choice_expected(answer.choice, value)
        return value

    @model_validator(mode="after")
    def _one_prompt(self) -> Case:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("expected exactly one of `prompt` or `messages`")
        if self.messages is not None and self.system is not None:
            raise ValueError("`system` goes with `prompt`; with `messages` put it in the list")
        return self


class Suite(Strict):
    version: Literal[1] = Field(description="Suite format version")
    name: str = Field(min_length=1, max_length=MAX_SUITE_NAME_CHARS, pattern=r"^[^\n<>]*$")
    provider: ProviderMapping
    sampling: Sampling = Sampling()
    embedding: Embedding = Embedding()
    thresholds: Thresholds = Thresholds()
    regression: Regression = Regression()
    equivalence: Equivalence | None = Field(
        None, description="Cluster completions by an entailment judge instead of cosine"
    )
    variants: Variants | None = Field(None, description="Variants of every case, measured with run --variants")
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Suite:
        seen: set[str] = set()
        for case in self.cases:
            if case.id in seen:
                raise ValueError(f"duplicate case id {case.id!r}")
            seen.add(case.id)
        return self


# The resolved view the pipeline works on: every default applied, every override merged.


class ResolvedCase(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    line: int | None  # line of the case in the suite file, for annotations
    messages: tuple[Message, ...]
    provider: SerializeAsAny[ProviderConfig]  # the config model of its type
    thresholds: Thresholds
    answer: AnswerSpec | None
    expected: JSON
    samples: int
    # Set in the suite (the case's, else sampling's); None: a multiple of `samples` (suite.sizes).
    baseline_samples: int | None = None
    max_samples: int | None = None
    # The entailment judge of `equivalence:` (the config model of its type); None: clusters by cosine.
    # Left out of the definition hash, like the clustering bar: it changes how answers are read, not
    # the question put to the model.
    entailment_judge: SerializeAsAny[ProviderConfig] | None = None
    # Outside the definition hash: how the samples are keyed, not the question put to the model.
    idempotency: Idempotency = "per_sample"

    @property
    def definition_hash(self) -> str:
        """Hash of what defines the case: messages, the provider's identity, parser (not thresholds)."""
        # The provider's identity has no address: a baseline recorded against localhost must still
        # compare in CI, where the same server answers at another host name.
        provider = self.provider.identity()
        material = {
            "messages": [m.model_dump() for m in self.messages],
            "provider": {key: value for key, value in provider.items() if key != "params"},
            "params": provider["params"],  # beside the provider, where the first hashes had it
            "parser": self.answer.model_dump(by_alias=True, exclude_none=True) if self.answer else None,
        }
        blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
