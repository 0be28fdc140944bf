"""The `openai` provider: POST {base_url}/chat/completions, for OpenAI and every server that speaks its API.

(vLLM, SGLang, TGI, llama.cpp, Ollama, LiteLLM, Azure-style gateways...) The suite's `params` go
through unchanged, so seed, response_format, tools and logprobs all reach the server.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Literal

import httpx
from pydantic import Field

from stabilitygate.errors import BadInput
from stabilitygate.providers.config import EndpointConfig, check_header_variables, expand_headers
from stabilitygate.providers.httpbase import ERROR_MESSAGE_CHARS, ClientPool, request_json
from stabilitygate.providers.interface import Completion, Provider, ProviderError, Request, TokenLogprob
from stabilitygate.secrets import Secrets, environment_secrets

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# The reply must be one JSON document: streaming is the one param that cannot pass through.
DROPPED_PARAMS = ("stream", "stream_options")
#: Sent with `idempotency: shared` (the IETF draft's header field); the suite's own headers win.
IDEMPOTENCY_HEADER = "Idempotency-Key"
CONNECTIONS_PER_CLIENT = 8  # see ClientPool: small pools keep httpcore's per-request cost flat


class OpenAIConfig(EndpointConfig):
    """`type: openai` (also the type of a provider that names none)."""

    type: Literal["openai"] = "openai"
    model: str = Field(min_length=1, description="Model name sent to the API")


class OpenAIProvider(Provider):
    """Draws completions from an OpenAI-compatible chat-completions endpoint.

    The connections are shared by every request (a ClientPool of small httpx clients); their number
    follows the sampler's concurrency and is not capped unless `max_connections` says so.
    """

    config_model = OpenAIConfig
    has_fingerprint = True
    default_base_url = DEFAULT_BASE_URL
    # Redacted always, but sent only when `api_key_env` names it: a gateway at another base_url
    # must not receive the OpenAI key by default.
    default_key_env = "OPENAI_API_KEY"

    def __init__(
        self,
        config: OpenAIConfig,
        *,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 60,
        max_connections: int | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self._url = (config.base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        self._model = config.model
        self._params = {k: v for k, v in (config.params or {}).items() if k not in DROPPED_PARAMS}
        secrets: list[str] = []
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if config.api_key_env:
            key = env.get(config.api_key_env)
            if not key:
                raise BadInput(f"provider openai: the variable {config.api_key_env} named by api_key_env is not set")
            secrets.append(key)
            headers["Authorization"] = f"Bearer {key}"
        extra = dict(config.headers or {})
        secrets.extend(check_header_variables(extra, env))
        custom = expand_headers(extra, env)
        overridden = {name.lower() for name in custom}
        # The suite's headers win whatever their case (e.g. `api-key` for Azure, another Authorization).
        self._headers = {k: v for k, v in headers.items() if k.lower() not in overridden} | custom
        # The reply may echo any key of the environment (a gateway's error page, a model told one).
        self.secrets: tuple[str, ...] = tuple(s for s in [*secrets, *environment_secrets(env)] if s)
        per_client = CONNECTIONS_PER_CLIENT
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=per_client)
        if max_connections is not None:  # one client holding all: httpx queues what exceeds the cap
            per_client = 1_000_000
            limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._clients = ClientPool(per_client=per_client, timeout=timeout_s, limits=limits, follow_redirects=False)

    async def complete(self, request: Request) -> Completion:
        params = {k: v for k, v in request.params.items() if k not in DROPPED_PARAMS}
        body: dict[str, object] = {**self._params, **params}
        model = request.model or self._model
        if model is not None:
            body["model"] = model
        body["messages"] = [dict(m) for m in request.messages]
        headers = self._headers
        if request.idempotency_shared and not any(name.lower() == "idempotency-key" for name in headers):
            # An application's cache keyed on it answers the case's repeated requests.
            headers = {**headers, IDEMPOTENCY_HEADER: request.idempotency_key}
        secrets = self.redacting(self.secrets)
        async with self._clients.client() as client:
            reply = await request_json(client, "POST", self._url, json=body, headers=headers, secrets=secrets)
        return parse_chat_completion(reply, secrets)

    async def aclose(self) -> None:
        await self._clients.aclose()


_NO_SECRETS = Secrets()


def _bad_shape(message: str) -> ProviderError:
    # Proxies and overloaded gateways answer 200 with odd bodies now and then: worth a retry.
    return ProviderError(f"openai: {message}", retryable=True, kind="bad_shape")


def parse_chat_completion(reply: object, secrets: Secrets = _NO_SECRETS) -> Completion:
    """The Completion in a chat.completion JSON body; ProviderError(kind="bad_shape") when it has none."""
    if not isinstance(reply, dict):
        raise _bad_shape(f"the reply is a JSON {type(reply).__name__}, not an object")
    if isinstance(reply.get("error"), dict) and "choices" not in reply:
        error = reply["error"]
        said = secrets.preview(str(error.get("message", error)), ERROR_MESSAGE_CHARS)
        raise _bad_shape(f"the reply is an error: {said}")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _bad_shape("the reply has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise _bad_shape("choices[0] has no message")
    extra: dict[str, object] = {}
    text = _tool_call_text(message.get("tool_calls"), extra)
    if text is None:
        text = _content_text(message.get("content"))
    if text is None and isinstance(message.get("refusal"), str):
        # Structured outputs: a refusal is what the model said, so it is the completion.
        text = message["refusal"]
        extra["refusal"] = True
    if text is None:
        raise _bad_shape("choices[0].message has neither content nor tool_calls")
    return Completion(
        text=text,
        model=reply["model"] if isinstance(reply.get("model"), str) else None,
        fingerprint=reply["system_fingerprint"] if isinstance(reply.get("system_fingerprint"), str) else None,
        usage=_usage(reply.get("usage")),
        finish_reason=choice["finish_reason"] if isinstance(choice.get("finish_reason"), str) else None,
        logprobs=_logprobs(choice.get("logprobs")),
        extra=extra,
    )


def _tool_call_text(tool_calls: object, extra: dict[str, object]) -> str | None:
    """The first tool call's arguments: with tools, they are the structured answer."""
    if not isinstance(tool_calls, list) or not tool_calls or not isinstance(tool_calls[0], dict):
        return None
    function = tool_calls[0].get("function")
    if not isinstance(function, dict):
        return None
    arguments = function.get("arguments")
    if isinstance(arguments, dict | list):  # some compatible servers send the object itself
        arguments = json.dumps(arguments, ensure_ascii=False)
    if not isinstance(arguments, str):
        return None
    if isinstance(function.get("name"), str):
        extra["tool_call"] = function["name"]
    return arguments


def _content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some compatible servers return them
        parts = [str(p["text"]) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def _usage(usage: object) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None
    out = {
        key: usage[key]
        for key in ("prompt_tokens", "completion_tokens")
        if isinstance(usage.get(key), int) and not isinstance(usage.get(key), bool)
    }
    return out or None


def _logprobs(logprobs: object) -> tuple[TokenLogprob, ...] | None:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    out = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            continue
        logprob = _number(entry.get("logprob"))
        if logprob is None:
            continue
        runner_up, runner_up_logprob = None, None
        for alt in entry.get("top_logprobs") or []:
            if not isinstance(alt, dict) or alt.get("token") == entry["token"] or not isinstance(alt.get("token"), str):
                continue
            alt_logprob = _number(alt.get("logprob"))
            if alt_logprob is not None and (runner_up_logprob is None or alt_logprob > runner_up_logprob):
                runner_up, runner_up_logprob = alt["token"], alt_logprob
        out.append(TokenLogprob(entry["token"], logprob, runner_up, runner_up_logprob))
    return tuple(out)


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None
