"""The `anthropic` provider: the Messages API (POST {base_url}/v1/messages).

The API has no seed and no system_fingerprint, and Anthropic documents that temperature 0 is not
fully deterministic: the report says the backend cannot be told apart between runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Literal

import httpx
from pydantic import Field

from stabilitygate.errors import BadInput
from stabilitygate.measure.canonical import canonical_json
from stabilitygate.providers.config import EndpointConfig, check_header_variables, expand_headers
from stabilitygate.providers.httpbase import ERROR_MESSAGE_CHARS, FATAL_HINTS, request_json
from stabilitygate.providers.interface import (
    Completion,
    FatalProviderError,
    Provider,
    ProviderError,
    Request,
)
from stabilitygate.secrets import Secrets, environment_secrets

API_VERSION = "2023-06-01"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 1024  # the API requires max_tokens; the suite may set its own in params
# The reply must be one JSON document: streaming is the one param that cannot pass through.
DROPPED_PARAMS = ("stream",)
FINISH_REASONS = {
    "max_tokens": "length",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
}
# Error types a 200-with-error body (proxies, streaming gateways) may carry that are worth retrying.
RETRYABLE_ERROR_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


def messages_url(base_url: str | None) -> str:
    """{base_url}/v1/messages, whether or not the configured base already ends in /v1."""
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def split_system(messages: Sequence[Mapping[str, str]]) -> tuple[str | None, list[dict[str, str]]]:
    """The top-level `system` text and the user/assistant turns the API accepts in `messages`."""
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for message in messages:
        role, content = message.get("role", "user"), message.get("content", "")
        if role in ("system", "developer"):
            system.append(content)
        elif role in ("user", "assistant"):
            turns.append({"role": role, "content": content})
        else:
            raise FatalProviderError(
                f"anthropic: a {role!r} message cannot be sent as plain text (the Messages API needs"
                " tool_result blocks); use user and assistant turns",
                kind="bad_request",
            )
    return ("\n\n".join(system) if system else None), turns


#: What to check for each refusal: its key is read from ANTHROPIC_API_KEY unless api_key_env names another.
STATUS_HINTS = {
    **FATAL_HINTS,
    401: f"authentication refused (check {DEFAULT_KEY_ENV}, or the variable named by api_key_env)",
}


class AnthropicConfig(EndpointConfig):
    """`type: anthropic`."""

    type: Literal["anthropic"]
    model: str = Field(min_length=1, description="Model name sent to the API")


class AnthropicProvider(Provider):
    """Draws completions from Anthropic's Messages API (or a server that speaks it)."""

    config_model = AnthropicConfig
    has_fingerprint = False
    default_base_url = DEFAULT_BASE_URL
    default_key_env = DEFAULT_KEY_ENV
    reads_default_key = True

    def __init__(
        self, config: AnthropicConfig, *, environ: Mapping[str, str] | None = None, timeout_s: float = 60
    ) -> None:
        env = os.environ if environ is None else environ
        key_env = self.key_env(config) or DEFAULT_KEY_ENV
        api_key = env.get(key_env)
        if not api_key:
            raise BadInput(f"provider anthropic: the variable {key_env} holding the API key is not set")
        self._url = messages_url(config.base_url)
        self._model = config.model
        extra = dict(config.headers or {})
        # The reply may echo any key of the environment: redacted before any message is cut.
        self._secrets = Secrets.of([api_key, *check_header_variables(extra, env), *environment_secrets(env)])
        custom = expand_headers(extra, env)
        overridden = {name.lower() for name in custom}
        defaults = {"x-api-key": api_key, "anthropic-version": API_VERSION}
        # The suite's headers win (e.g. another anthropic-version, anthropic-beta), whatever their case.
        self._headers = {**{k: v for k, v in defaults.items() if k not in overridden}, **custom}
        # The sampler's concurrency is the limit, not the pool (httpx's default would cap it at 100).
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=timeout_s, limits=limits, follow_redirects=False)

    async def complete(self, request: Request) -> Completion:
        system, turns = split_system(request.messages)
        params = {k: v for k, v in request.params.items() if k not in DROPPED_PARAMS}
        body: dict[str, object] = {"max_tokens": DEFAULT_MAX_TOKENS, **params}
        body["model"] = request.model or self._model
        body["messages"] = turns
        if system is not None:
            body["system"] = system
        reply = await request_json(
            self._client,
            "POST",
            self._url,
            json=body,
            headers=self._headers,
            secrets=self.redacting(self._secrets),
            hints=STATUS_HINTS,
        )
        return self._completion_of(reply)

    async def aclose(self) -> None:
        await self._client.aclose()

    def _completion_of(self, reply: object) -> Completion:
        if not isinstance(reply, dict):
            raise ProviderError("anthropic: the reply is not a JSON object", retryable=False, kind="bad_body")
        if reply.get("type") == "error":
            error: dict[str, object] = reply["error"] if isinstance(reply.get("error"), dict) else {}
            secrets = self.redacting(self._secrets)
            kind = secrets.preview(str(error.get("type", "error")), 60)
            raise ProviderError(
                f"anthropic: {kind}: {secrets.preview(str(error.get('message', '')), ERROR_MESSAGE_CHARS)}",
                retryable=kind in RETRYABLE_ERROR_TYPES,
                kind=kind,
            )
        content = reply.get("content")
        if not isinstance(content, list):
            raise ProviderError("anthropic: the reply has no `content` list", retryable=False, kind="bad_body")
        blocks = [b for b in content if isinstance(b, dict)]
        tool = next((b for b in blocks if b.get("type") == "tool_use"), None)
        extra: dict[str, object] = {}
        if tool is not None:
            # The tool's arguments are the structured answer: `answer: {json: ...}` parses them.
            text = canonical_json(tool.get("input", {}))
            extra["tool_name"] = tool.get("name")
        else:
            text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        stop = reply.get("stop_reason")
        return Completion(
            text=text,
            model=reply.get("model") if isinstance(reply.get("model"), str) else self._model,
            fingerprint=None,
            usage=_usage(reply.get("usage")),
            finish_reason=FINISH_REASONS.get(stop, stop) if isinstance(stop, str) else None,
            extra=extra,
        )


def _usage(usage: object) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    mapped = {
        ours: usage[theirs]
        for ours, theirs in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens"))
        if isinstance(usage.get(theirs), int) and not isinstance(usage.get(theirs), bool)
    }
    return mapped or None
