"""The one small interface every provider shares: a request in, a completion or a typed error out."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    """One sample to draw: the case's messages sent once to its model."""

    case_id: str
    index: int  # 0-based sample index within the case
    messages: tuple[Mapping[str, str], ...]  # [{"role": ..., "content": ...}]
    model: str | None
    params: Mapping[str, Any]  # passed through to the API (temperature, seed, max_tokens, tools, ...)
    idempotency_key: str  # stable per case and sample index


@dataclass(frozen=True)
class TokenLogprob:
    """A generated token with its log-probability and the best alternative's (for near-tie diagnostics)."""

    token: str
    logprob: float
    runner_up: str | None = None
    runner_up_logprob: float | None = None


@dataclass(frozen=True)
class Completion:
    """What a provider returns for one request."""

    text: str
    model: str | None = None  # the model the server says answered
    fingerprint: str | None = None  # system_fingerprint, where the API has one
    usage: Mapping[str, int] | None = None  # prompt_tokens, completion_tokens
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


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
    """A source of completions. Instances are used from one asyncio event loop."""

    #: Whether the API has a seed / system_fingerprint at all (the report says so when it has not).
    has_fingerprint: bool = True

    @abc.abstractmethod
    async def complete(self, request: Request) -> Completion:
        """Draw one completion, or raise ProviderError."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections, models, processes."""
