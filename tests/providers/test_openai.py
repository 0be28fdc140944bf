"""The `openai` provider against the scripted OpenAI server, and the provider registry."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Mapping
from typing import Any, get_args

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.providers import make_provider
from stabilitygate.providers.interface import Completion, FatalProviderError, Provider, ProviderError, Request
from stabilitygate.providers.openai import OpenAIConfig, OpenAIProvider, parse_chat_completion
from stabilitygate.providers.registry import BUILT_IN
from stabilitygate.suite.model import ProviderConfig
from tests.support.openai_server import Fault, ScriptedOpenAI

KEY = "sk-live-0123456789abcdef"
FEYNMAN = "Where was Feynman born?"


def _request(prompt: str = FEYNMAN, params: Mapping[str, Any] | None = None, model: str | None = None) -> Request:
    return Request(
        case_id="c",
        index=0,
        messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}),
        model=model,
        params=dict(params or {}),
        idempotency_key="k:0",
    )


def _complete(provider: OpenAIProvider, request: Request) -> Completion:
    async def go() -> Completion:
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def _config(server: ScriptedOpenAI, **extra: Any) -> OpenAIConfig:
    return OpenAIConfig(type="openai", model="gpt-test", base_url=server.base_url, **extra)


def test_a_shared_idempotency_key_goes_in_the_idempotency_key_header_and_only_then() -> None:
    shared = Request(
        case_id="c", index=3, messages=({"role": "user", "content": FEYNMAN},), model=None, params={},
        idempotency_key="sha256:abc:c", idempotency_shared=True,
    )  # fmt: skip
    with ScriptedOpenAI({FEYNMAN: "Queens"}) as server:
        _complete(OpenAIProvider(_config(server)), shared)
        _complete(OpenAIProvider(_config(server)), _request())
        own = OpenAIProvider(_config(server, headers={"idempotency-key": "mine"}))
        _complete(own, shared)
        first, second, third = server.requests
    assert first.headers["idempotency-key"] == "sha256:abc:c"
    assert "idempotency-key" not in second.headers  # one key per sample is no key an application can use
    assert third.headers["idempotency-key"] == "mine"  # the suite's own header wins, whatever its case


def test_sends_model_messages_params_and_the_bearer_key() -> None:
    params = {
        "temperature": 0,
        "seed": 7,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
        "stream": True,  # cannot pass: the reply must be one document
    }
    with ScriptedOpenAI({FEYNMAN: "Queens, New York"}) as server:
        config = _config(server, api_key_env="TEST_KEY", params={"temperature": 1, "top_p": 0.5})
        provider = OpenAIProvider(config, environ={"TEST_KEY": KEY})
        completion = _complete(provider, _request(params=params))
        (received,) = server.requests
    assert completion.text == "Queens, New York"
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == f"Bearer {KEY}"
    assert received.body == {
        "temperature": 0,  # the request's params win over the config's
        "top_p": 0.5,
        "seed": 7,
        "max_tokens": 64,
        "response_format": {"type": "json_object"},
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": FEYNMAN}],
    }


def test_no_key_configured_sends_no_authorization() -> None:
    with ScriptedOpenAI() as server:
        _complete(OpenAIProvider(_config(server), environ={}), _request(model="override"))
        (received,) = server.requests
    assert "authorization" not in received.headers
    assert received.body["model"] == "override"


def test_extra_headers_expand_variables_and_may_replace_authorization() -> None:
    with ScriptedOpenAI() as server:
        config = _config(server, api_key_env="TEST_KEY", headers={"api-key": "${AZURE_KEY}", "X-Team": "gate"})
        provider = OpenAIProvider(config, environ={"TEST_KEY": KEY, "AZURE_KEY": "az-secret"})
        _complete(provider, _request())
        (received,) = server.requests
    assert received.headers["api-key"] == "az-secret" and received.headers["x-team"] == "gate"
    assert set(provider.secrets) == {KEY, "az-secret"}  # named, and named like keys


def test_missing_key_variable_is_bad_input() -> None:
    with pytest.raises(BadInput, match="OPENAI_API_KEY"):
        OpenAIProvider(OpenAIConfig(type="openai", model="m", api_key_env="OPENAI_API_KEY"), environ={})
    with pytest.raises(BadInput, match="UNSET_VAR"):
        OpenAIProvider(OpenAIConfig(type="openai", model="m", headers={"x": "${UNSET_VAR}"}), environ={})


def test_records_fingerprint_model_usage_and_finish_reason() -> None:
    with ScriptedOpenAI({FEYNMAN: "Queens, New York"}, model="gpt-4o-2024", fingerprint="fp_abc") as server:
        completion = _complete(OpenAIProvider(_config(server), environ={}), _request())
    assert completion.model == "gpt-4o-2024" and completion.fingerprint == "fp_abc"
    assert completion.usage == {"prompt_tokens": 6, "completion_tokens": 3}
    assert completion.finish_reason == "stop" and completion.logprobs is None


def test_finish_reason_length_is_kept() -> None:
    with ScriptedOpenAI({FEYNMAN: "Queens"}, faults=[Fault("length")]) as server:
        completion = _complete(OpenAIProvider(_config(server), environ={}), _request())
    assert completion.text == "Queens" and completion.finish_reason == "length"


def test_tool_call_arguments_are_the_completion() -> None:
    tools = [{"type": "function", "function": {"name": "report_borough", "parameters": {"type": "object"}}}]
    with ScriptedOpenAI({FEYNMAN: '{"borough": "Queens"}'}) as server:
        completion = _complete(OpenAIProvider(_config(server), environ={}), _request(params={"tools": tools}))
        (received,) = server.requests
    assert received.body["tools"] == tools
    assert completion.text == '{"borough": "Queens"}'
    assert completion.extra["tool_call"] == "report_borough" and completion.finish_reason == "tool_calls"


def test_logprobs_with_runner_up() -> None:
    with ScriptedOpenAI({FEYNMAN: "Queens, New York"}) as server:
        params = {"logprobs": True, "top_logprobs": 3}
        completion = _complete(OpenAIProvider(_config(server), environ={}), _request(params=params))
    assert completion.logprobs is not None
    assert [t.token for t in completion.logprobs] == ["Queens", ",", " New", " York"]
    first = completion.logprobs[0]
    assert first.logprob == pytest.approx(-0.01) and first.runner_up == "QUEENS"
    assert first.runner_up_logprob == pytest.approx(-2.51)
    assert completion.logprobs[1].runner_up == ",X"  # punctuation has no upper case: the server adds an X


def test_wrong_shape_is_a_retryable_bad_shape() -> None:
    with ScriptedOpenAI(faults=[Fault("wrong_shape")]) as server, pytest.raises(ProviderError) as info:
        _complete(OpenAIProvider(_config(server), environ={}), _request())
    assert info.value.kind == "bad_shape" and info.value.retryable


def test_refused_key_is_fatal_and_never_shown() -> None:
    with ScriptedOpenAI(api_key="sk-the-right-one") as server:
        config = _config(server, api_key_env="TEST_KEY")
        with pytest.raises(FatalProviderError) as info:
            _complete(OpenAIProvider(config, environ={"TEST_KEY": KEY}), _request())
    message = str(info.value)
    assert "HTTP 401" in message and "api_key_env" in message and info.value.status == 401
    assert KEY not in message and KEY not in repr(info.value.args)


def test_echoed_key_is_redacted() -> None:
    with ScriptedOpenAI(faults=[Fault("echo_auth", status=403)]) as server:
        config = _config(server, api_key_env="TEST_KEY")
        with pytest.raises(FatalProviderError) as info:
            _complete(OpenAIProvider(config, environ={"TEST_KEY": KEY}), _request())
    assert "HTTP 403" in str(info.value) and KEY not in str(info.value) and "Bearer ***" in str(info.value)


@pytest.mark.parametrize(
    ("reply", "text", "extra"),
    [
        ({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]}}]}, "ab", {}),
        (
            {
                "choices": [
                    {"message": {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}}
                ]
            },
            '{"x": 1}',
            {"tool_call": "f"},
        ),
        ({"choices": [{"message": {"content": None, "refusal": "I can't help."}}]}, "I can't help.", {"refusal": True}),
        ({"choices": [{"message": {"content": ""}}]}, "", {}),
    ],
)
def test_parse_variants_of_compatible_servers(reply: dict[str, Any], text: str, extra: dict[str, Any]) -> None:
    completion = parse_chat_completion(reply)
    assert completion.text == text and dict(completion.extra) == extra
    assert completion.model is None and completion.usage is None and completion.fingerprint is None


@pytest.mark.parametrize(
    "reply",
    [
        [],
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"message": {"content": None}}]},
        {"error": {"message": "overloaded"}},
        {"choices": [{"message": {"content": None, "tool_calls": [{"function": {"name": "f"}}]}}]},
    ],
)
def test_parse_wrong_shapes(reply: Any) -> None:
    with pytest.raises(ProviderError) as info:
        parse_chat_completion(reply)
    assert info.value.kind == "bad_shape" and info.value.retryable


def test_parse_usage_keeps_only_integer_token_counts() -> None:
    reply = {
        "choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": True, "total_tokens": 4},
    }
    assert parse_chat_completion(reply).usage == {"prompt_tokens": 3}


# ---- the registry


def test_make_provider_builds_openai_by_default() -> None:
    provider = make_provider(ProviderConfig(type="openai", model="m"), environ={})
    assert isinstance(provider, OpenAIProvider)  # a plain config is validated by the type's model
    asyncio.run(provider.aclose())


def test_make_provider_imports_other_kinds_lazily() -> None:
    provider = make_provider({"type": "http", "url": "http://127.0.0.1:9/answer"}, environ={})
    assert type(provider).__name__ == "HttpAppProvider"
    asyncio.run(provider.aclose())


def test_every_registered_kind_names_a_provider_class() -> None:
    for kind, where in BUILT_IN.items():
        module, _, name = where.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, Provider), kind
        assert get_args(cls.config_model.model_fields["type"].annotation) == (kind,)


def test_make_provider_rejects_an_unknown_type() -> None:
    config = ProviderConfig.model_construct(type="carrier-pigeon")
    with pytest.raises(BadInput, match="unknown provider type 'carrier-pigeon'"):
        make_provider(config)
