"""The suite file as typed, immutable objects (DESIGN section 4).

pydantic does the type checking and generates the published JSON Schema; the YAML line numbers
that make error messages useful are attached by `suite.load`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ProviderType = Literal["openai", "local", "anthropic", "http", "command"]
Normalization = Literal["strip", "lower", "whitespace", "punctuation"]
Share = Annotated[float, Field(ge=0.0, le=1.0)]
DEFAULT_CLUSTER_COSINE = 0.95


class Strict(BaseModel):
    """Unknown keys are errors; objects never change after loading."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class ProviderConfig(Strict):
    """Where completions come from. Every field is optional so that a case can override any part."""

    type: ProviderType | None = Field(None, description="openai | local | anthropic | http | command")
    model: str | None = Field(None, description="Model name sent to the API (local: a GGUF path or none)")
    base_url: str | None = Field(None, description="API root, e.g. https://api.openai.com/v1")
    api_key_env: str | None = Field(
        None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="NAME of the variable holding the key"
    )
    headers: dict[str, str] | None = Field(None, description="Extra HTTP headers (values may use ${VAR})")
    params: dict[str, Any] | None = Field(None, description="Passed through to the API unchanged")
    # http provider: the team's own application
    url: str | None = Field(None, description="http: the endpoint to call")
    method: Literal["GET", "POST", "PUT", "PATCH"] | None = Field(None, description="http: the method")
    body: str | None = Field(None, description="http: a jinja2 template of the JSON body")
    completion_pointer: str | None = Field(
        None, description="http: RFC 6901 pointer to the completion in the response"
    )
    # command provider
    command: list[str] | str | None = Field(None, description="command: argv list, or a string with shell")
    shell: bool | None = Field(None, description="command: run through the shell (off by default)")
    input: Literal["stdin", "json"] | None = Field(
        None, description="command: the prompt as text on stdin, or the request as JSON"
    )

    @field_validator("params")
    @classmethod
    def _params_are_json(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # YAML has values JSON has not (dates, sets): the API would choke on them mid-run.
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"params must be plain JSON values (quote dates and the like): {exc}") from None
        return value

    def merged(self, override: ProviderConfig | None) -> ProviderConfig:
        """This config with every field the override sets replaced (params merged key by key)."""
        if override is None:
            return self
        data = self.model_dump(exclude_none=True)
        over = override.model_dump(exclude_none=True)
        if override.type is not None and override.type != self.type:
            data = {}  # another kind of provider shares nothing with the default
        params = {**(data.get("params") or {}), **(over.get("params") or {})}
        data.update(over)
        if params:
            data["params"] = params
        return ProviderConfig(**data)


class Sampling(Strict):
    samples: int = Field(10, ge=2, le=100_000, description="Samples per case (N)")
    concurrency: int = Field(8, ge=1, le=1024, description="Requests in flight, over the whole run")
    timeout_s: float = Field(60.0, gt=0, le=3600, description="Per-request timeout")
    retries: int = Field(5, ge=0, le=50, description="Retries of one sample on 429, 5xx, timeouts")
    max_retry_wait_s: float = Field(60.0, gt=0, le=3600, description="Longest single backoff or Retry-After")
    max_requests: int | None = Field(
        None, ge=1, description="Cap on requests for the whole run, retries included (default 3 x N x cases)"
    )
    early_stop: bool = Field(True, description="Stop sampling a case once it has certainly failed")


class Embedding(Strict):
    enabled: bool = Field(True, description="false turns the semantic layer off")
    model: str = Field("all-MiniLM-L6-v2", description="The offline sentence-transformers model")
    batch_size: int = Field(32, ge=1, le=4096)


class Thresholds(Strict):
    max_unique: int | None = Field(None, ge=1, description="Most distinct completions allowed")
    min_mode_share: Share | None = None
    min_agreement: Share | None = Field(None, description="Least parsed_agreement allowed")
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


class Regression(Strict):
    alpha: float = Field(0.05, gt=0, lt=1, description="Family-wise false-failure rate (Holm)")
    min_drop: Share = Field(0.10, description="Least drop of the agreement metric that can regress")
    fail_on_answer_change: bool = True
    fail_on_semantic_drift: bool = True


class TextAnswer(Strict):
    normalize: list[Normalization] = Field(default_factory=list)


class AnswerSpec(Strict):
    """How to parse the answer out of a completion: exactly one parser, optionally a schema."""

    json_: str | None = Field(None, alias="json", description="RFC 6901 pointer; '' = whole document")
    choice: list[str] | None = Field(None, min_length=2, description="The labels, e.g. [A, B, C, D]")
    regex: str | None = Field(None, description="First group, else the whole match")
    number: Literal[True] | None = None
    text: TextAnswer | None = None
    schema_: dict[str, Any] | None = Field(None, alias="schema", description="JSON Schema the answer must meet")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _exactly_one_parser(self) -> AnswerSpec:
        chosen = [k for k in ("json_", "choice", "regex", "number", "text") if getattr(self, k) is not None]
        if len(chosen) != 1:
            raise ValueError("expected exactly one of json, choice, regex, number, text")
        if self.json_ not in (None, "") and not self.json_.startswith("/"):
            raise ValueError(f"json: {self.json_!r} is not an RFC 6901 pointer: it starts with '/' (or is '')")
        if self.regex is not None:
            import re

            try:
                re.compile(self.regex)
            except re.error as exc:
                raise ValueError(f"regex does not compile: {exc}") from None
        if self.schema_ is not None:
            from jsonschema import Draft202012Validator, SchemaError

            try:
                Draft202012Validator.check_schema(self.schema_)
            except SchemaError as exc:
                raise ValueError(f"schema is not a valid JSON Schema: {exc.message}") from None
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("json", "choice", "regex", "number", "text") if self.spec_value(k) is not None)

    def spec_value(self, kind: str) -> Any:
        return getattr(self, {"json": "json_", "schema": "schema_"}.get(kind, kind))


class Message(Strict):
    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str


class Case(Strict):
    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$", max_length=200)
    description: str | None = None
    system: str | None = None
    prompt: str | None = None
    messages: list[Message] | None = Field(None, min_length=1)
    answer: AnswerSpec | None = None
    expected: Any = None
    samples: int | None = Field(None, ge=2, le=100_000, description="Overrides sampling.samples")
    thresholds: Thresholds | None = None
    provider: ProviderConfig | None = None

    @model_validator(mode="after")
    def _one_prompt(self) -> Case:
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("expected exactly one of `prompt` or `messages`")
        if self.messages is not None and self.system is not None:
            raise ValueError("`system` goes with `prompt`; with `messages` put it in the list")
        return self


class Suite(Strict):
    version: Literal[1] = Field(description="Suite format version")
    name: str = Field(min_length=1, max_length=100, pattern=r"^[^\n<>]*$")
    provider: ProviderConfig
    sampling: Sampling = Sampling()
    embedding: Embedding = Embedding()
    thresholds: Thresholds = Thresholds()
    regression: Regression = Regression()
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
    provider: ProviderConfig
    thresholds: Thresholds
    answer: AnswerSpec | None
    expected: Any
    samples: int

    @property
    def definition_hash(self) -> str:
        """Hash of what defines the case: messages, provider, model, params, parser (not thresholds)."""
        p = self.provider
        # The endpoint's address is left out on purpose: a baseline recorded against localhost must
        # still compare in CI, where the same server answers at another host name.
        material = {
            "messages": [m.model_dump() for m in self.messages],
            "provider": {
                "type": p.type,
                "model": p.model,
                "body": p.body,
                "command": p.command,
                "completion_pointer": p.completion_pointer,
            },
            "params": p.params or {},
            "parser": self.answer.model_dump(by_alias=True, exclude_none=True) if self.answer else None,
        }
        blob = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return "sha256:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
