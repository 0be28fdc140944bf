"""The one small interface every provider shares: a request in, a completion or a typed error out."""

from __future__ import annotations

import abc
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Self

from pydantic import ValidationError

from stabilitygate.errors import BadInput
from stabilitygate.providers.config import EndpointConfig, HeaderedConfig, KeyedConfig, header_variables
from stabilitygate.samples import TokenLogprob as TokenLogprob  # a provider's logprobs are the samples'
from stabilitygate.secrets import Secrets
from stabilitygate.suite.model import ProviderConfig, ResolvedCase

__all__ = ["Completion", "FatalProviderError", "Provider", "ProviderError", "Request", "TokenLogprob"]


@dataclass(frozen=True)
class Request:
    """One sample to draw: the case's messages sent once to its model."""

    case_id: str
    index: int  # 0-based sample index within the case
    messages: tuple[Mapping[str, str], ...]  # [{"role": ..., "content": ...}]
    model: str | None
    params: Mapping[str, object]  # passed through to the API (temperature, seed, max_tokens, tools, ...)
    idempotency_key: str  # stable per case and sample index; per case with `idempotency: shared`
    idempotency_shared: bool = False  # one key for all of the case's samples: openai sends it as a header

    @classmethod
    def of_case(cls, case: ResolvedCase, index: int) -> Request:
        """Sample `index` of `case`, as the sampler sends it: one idempotency key per sample, or with
        `idempotency: shared` one for all of the case's samples."""
        key, shared = f"{case.definition_hash}:{case.id}", case.idempotency == "shared"
        return cls(
            case_id=case.id,
            index=index,
            messages=tuple({"role": m.role, "content": m.content} for m in case.messages),
            model=case.provider.model,
            params=dict(case.provider.params or {}),
            idempotency_key=key if shared else f"{key}:{index}",
            idempotency_shared=shared,
        )


@dataclass(frozen=True)
class Completion:
    """What a provider returns for one request."""

    text: str
    model: str | None = None  # the model the server says answered
    fingerprint: str | None = None  # system_fingerprint, where the API has one
    usage: Mapping[str, int] | None = None  # prompt_tokens, completion_tokens
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    extra: Mapping[str, object] = field(default_factory=dict)


class ProviderError(Exception):
    """A request that failed. `retryable` tells the sampler whether trying again can help.

    The message must never contain a secret: providers redact before raising.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        kind: str = "error",
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind = kind  # short tag for reports: "http_429", "timeout", "connect", "bad_body", ...


class FatalProviderError(ProviderError):
    """An error retrying cannot fix for any request (401, 403, 404, 400): the run stops with exit 3."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "fatal") -> None:
        super().__init__(message, retryable=False, status=status, kind=kind)


class Provider(abc.ABC):
    """A source of completions, and everything the gate knows about its type.

    A type is one module: a subclass naming its `config_model` (the keys its suite entry takes),
    its defaults and its secrets, plus one line in `stabilitygate.providers.registry` (or an entry
    point in the group `stabilitygate.providers`). Instances are used from one asyncio event loop.
    """

    #: The model of this type's `provider:` mapping; its `type` field is a Literal of the type's name.
    config_model: ClassVar[type[ProviderConfig]] = ProviderConfig
    #: Whether the API has a seed / system_fingerprint at all (the report says so when it has not).
    has_fingerprint: ClassVar[bool] = True
    #: The API root used when the suite gives no `base_url` (endpoint types only).
    default_base_url: ClassVar[str | None] = None
    #: The variable this API's key conventionally lives in: always a secret, and the key itself when
    #: `reads_default_key` and the suite names no `api_key_env`.
    default_key_env: ClassVar[str | None] = None
    reads_default_key: ClassVar[bool] = False
    #: What a request of this type carries, for the message refusing a variant that changes none of it.
    sends: ClassVar[str] = "its model, params and messages, to its endpoint"
    #: The run's other secrets (every provider's key, the variants' and the entailment judge's): a reply
    #: or an error body may echo any of them, so each is redacted beside the provider's own before a
    #: message is folded or cut (docs/design.md §12). `create` sets it.
    run_secrets: Secrets = Secrets()

    @abc.abstractmethod
    def __init__(self, config: ProviderConfig, *, environ: Mapping[str, str], timeout_s: float) -> None:
        """Build from this type's `config_model` (`create` guarantees it); BadInput when unusable."""

    @classmethod
    def create(
        cls,
        config: ProviderConfig | Mapping[str, object],
        *,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 60,
        run_secrets: Iterable[str] = (),
    ) -> Self:
        """A provider for `config` (a mapping, or a config validated against `config_model` if need be);
        BadInput when the config does not fit this type or the environment lacks what it names.
        `run_secrets`: the run's secrets, redacted from its messages beside its own."""
        typed = cls.typed_config(config)
        provider = cls(typed, environ=os.environ if environ is None else environ, timeout_s=timeout_s)
        provider.run_secrets = Secrets.of(run_secrets)
        return provider

    def redacting(self, own: Iterable[str]) -> Secrets:
        """The provider's own secrets and the run's, as one set to redact with."""
        return Secrets.of(own) | self.run_secrets

    @classmethod
    def typed_config(cls, config: ProviderConfig | Mapping[str, object]) -> ProviderConfig:
        """`config` as this type's config model, with the type's defaults filled in."""
        if not isinstance(config, cls.config_model):
            data = config.model_dump(exclude_none=True) if isinstance(config, ProviderConfig) else dict(config)
            try:
                config = cls.config_model.model_validate(data)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(part) for part in first["loc"])
                message = str(first["msg"]).removeprefix("Value error, ")
                raise BadInput(f"provider.{where}: {message}" if where else message) from exc
        if cls.default_base_url and isinstance(config, EndpointConfig) and not config.base_url:
            config = config.model_copy(update={"base_url": cls.default_base_url})
        return config

    @classmethod
    def key_env(cls, config: ProviderConfig) -> str | None:
        """The variable the API key is read from, if the provider reads one."""
        named = config.api_key_env if isinstance(config, KeyedConfig) else None
        return named or (cls.default_key_env if cls.reads_default_key else None)

    @classmethod
    def secret_env_names(cls, config: ProviderConfig) -> frozenset[str]:
        """Names of the variables whose values this provider may send or see: keys and header ${VAR}s."""
        names = {cls.key_env(config), cls.default_key_env}
        if isinstance(config, HeaderedConfig):
            names |= header_variables(config.headers or {})
        return frozenset(name for name in names if name)

    @classmethod
    def check_request(cls, config: ProviderConfig, request: Request, *, timeout_s: float) -> str | None:
        """What sending `request` would find wrong with `config` before anything is sent (a body template
        that does not render): the message, or None. Run when the suite loads, so `validate` says it."""
        return None

    @classmethod
    def sent(cls, config: ProviderConfig, request: Request, *, timeout_s: float) -> object:
        """What sending `request` with `config` would send, comparable with `==`: a variant whose first
        request sends what its case's does changes nothing (docs/design.md §16.1). None when it cannot be
        told. By default the whole config and the request's model, params and messages."""
        return (config.model_dump_json(), request.model, dict(request.params), request.messages)

    async def warm_up(self) -> None:  # noqa: B027 - optional hook, a no-op for most providers
        """Get ready before the first request's clock starts (e.g. load a model)."""

    @abc.abstractmethod
    async def complete(self, request: Request) -> Completion:
        """Draw one completion, or raise ProviderError."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections, models, processes."""
