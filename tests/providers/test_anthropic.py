"""The anthropic provider against a loopback server speaking the Messages API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from stabilitygate.cli import main
from stabilitygate.errors import BadInput
from stabilitygate.providers.anthropic import AnthropicConfig, AnthropicProvider, messages_url
from stabilitygate.providers.interface import Completion, FatalProviderError, ProviderError, Request
from tests.support.anthropic_server import (
    Reply,
    ScriptedAnthropic,
    error_reply,
    overloaded,
    text_reply,
    tool_reply,
)

KEY = "sk-ant-test-0123456789"
ENV = {"ANTHROPIC_API_KEY": KEY}


def request(
    index: int = 0, *, prompt: str = "Where was Feynman born?", system: str | None = None, **params: Any
) -> Request:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return Request(
        case_id="borough",
        index=index,
        messages=tuple(messages),
        model="claude-test",
        params=params,
        idempotency_key=f"borough:{index}",
    )


@pytest.fixture
def server() -> Iterator[ScriptedAnthropic]:
    with ScriptedAnthropic(api_key=KEY) as running:
        yield running


def provider(server: ScriptedAnthropic, environ: Mapping[str, str] = ENV, **config: Any) -> AnthropicProvider:
    config.setdefault("base_url", server.base_url)
    return AnthropicProvider(
        AnthropicConfig(type="anthropic", model="claude-test", **config), environ=environ, timeout_s=5
    )


def complete(p: AnthropicProvider, req: Request | None = None) -> Completion:
    async def once() -> Completion:
        try:
            return await p.complete(req or request())
        finally:
            await p.aclose()

    return asyncio.run(once())


def failure(p: AnthropicProvider, req: Request | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        complete(p, req)
    return info.value


def test_a_text_reply_and_the_request_the_api_expects(server: ScriptedAnthropic) -> None:
    server.queue(text_reply("Queens, ", "New York"))
    done = complete(
        provider(server, headers={"anthropic-beta": "test-beta"}),
        request(system="Answer briefly.", temperature=0, top_k=1, stop_sequences=["\n\n"], stream=True),
    )
    assert done.text == "Queens, New York"
    assert done.finish_reason == "stop"
    assert done.model == "claude-test"
    assert done.fingerprint is None
    assert done.usage == {"prompt_tokens": 6, "completion_tokens": 3}
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["anthropic-beta"] == "test-beta"
    assert sent.body == {
        "model": "claude-test",
        "max_tokens": 1024,
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": "Where was Feynman born?"}],
        "temperature": 0,
        "top_k": 1,
        "stop_sequences": ["\n\n"],
    }
    assert AnthropicProvider.has_fingerprint is False


def test_max_tokens_from_params_wins_and_a_cut_reply_is_length(server: ScriptedAnthropic) -> None:
    server.queue(text_reply("Queens", stop_reason="max_tokens"))
    done = complete(provider(server), request(max_tokens=5))
    assert server.requests[0].body["max_tokens"] == 5
    assert "system" not in server.requests[0].body
    assert done.finish_reason == "length"


def test_stop_sequence_is_a_normal_stop(server: ScriptedAnthropic) -> None:
    server.queue(text_reply("Queens", stop_reason="stop_sequence"))
    assert complete(provider(server)).finish_reason == "stop"


def test_a_tool_call_becomes_its_input_as_canonical_json(server: ScriptedAnthropic) -> None:
    server.queue(tool_reply("answer", {"city": "New York", "borough": "Queens"}, preface="Let me answer."))
    tools = [{"name": "answer", "input_schema": {"type": "object"}}]
    tool_choice = {"type": "tool", "name": "answer"}
    done = complete(provider(server), request(tools=tools, tool_choice=tool_choice))
    assert done.text == '{"borough":"Queens","city":"New York"}'
    assert done.finish_reason == "tool_calls"
    assert done.extra == {"tool_name": "answer"}
    body = server.requests[0].body
    assert body["tools"] == tools
    assert body["tool_choice"] == tool_choice


def test_529_overloaded_is_retryable_with_its_retry_after(server: ScriptedAnthropic) -> None:
    server.queue(overloaded(retry_after="2"))
    error = failure(provider(server))
    assert not isinstance(error, FatalProviderError)
    assert error.retryable is True
    assert error.status == 529
    assert error.retry_after == 2.0
    assert "Overloaded" in str(error)


def test_after_an_overload_the_next_request_succeeds(server: ScriptedAnthropic) -> None:
    server.queue(overloaded(), text_reply("Queens"))
    p = provider(server)

    async def twice() -> tuple[BaseException | Completion, Completion]:
        try:
            first: BaseException | Completion
            try:
                first = await p.complete(request(0))
            except ProviderError as exc:
                first = exc
            return first, await p.complete(request(0))
        finally:
            await p.aclose()

    first, second = asyncio.run(twice())
    assert isinstance(first, ProviderError)
    assert second.text == "Queens"


def test_a_refused_key_is_fatal_and_never_shown(server: ScriptedAnthropic) -> None:
    wrong = "sk-ant-wrong-key-987654"
    error = failure(provider(server, environ={"ANTHROPIC_API_KEY": wrong}))
    assert isinstance(error, FatalProviderError)
    assert error.status == 401
    assert wrong not in str(error)
    assert "check ANTHROPIC_API_KEY, or the variable named by api_key_env" in str(error)  # where its key is read


def test_an_error_body_that_echoes_the_key_is_redacted(server: ScriptedAnthropic) -> None:
    server.queue(error_reply(400, "invalid_request_error", f"bad request with key {KEY}"))
    error = failure(provider(server))
    assert isinstance(error, FatalProviderError)
    assert KEY not in str(error)
    assert "***" in str(error)


def test_api_key_env_names_another_variable(server: ScriptedAnthropic) -> None:
    done = complete(provider(server, environ={"TEAM_KEY": KEY}, api_key_env="TEAM_KEY"))
    assert done.text == "OK"
    assert server.requests[0].headers["x-api-key"] == KEY


def test_a_missing_key_is_bad_input_naming_the_variable(server: ScriptedAnthropic) -> None:
    with pytest.raises(BadInput, match="ANTHROPIC_API_KEY"):
        provider(server, environ={})


def test_header_values_expand_variables_and_may_override_the_version(server: ScriptedAnthropic) -> None:
    env = {**ENV, "GATEWAY_TOKEN": "gw-secret"}
    headers = {"Anthropic-Version": "2024-01-01", "X-Gateway": "Bearer ${GATEWAY_TOKEN}"}
    complete(provider(server, environ=env, headers=headers))
    sent = server.requests[0].headers
    assert sent["anthropic-version"] == "2024-01-01"
    assert sent["x-gateway"] == "Bearer gw-secret"


def test_a_header_naming_an_unset_variable_is_bad_input(server: ScriptedAnthropic) -> None:
    with pytest.raises(BadInput, match="NOT_SET_ANYWHERE"):
        provider(server, headers={"X-Token": "${NOT_SET_ANYWHERE}"})


def test_a_tool_role_message_is_refused_before_sending(server: ScriptedAnthropic) -> None:
    req = Request("c", 0, ({"role": "user", "content": "q"}, {"role": "tool", "content": "42"}), "m", {}, "k")
    error = failure(provider(server), req)
    assert isinstance(error, FatalProviderError)
    assert server.count == 0


def test_a_reply_without_content_is_a_bad_body(server: ScriptedAnthropic) -> None:
    server.queue(Reply(200, {"type": "message", "role": "assistant"}))
    error = failure(provider(server))
    assert error.kind == "bad_body"


def test_an_error_object_in_a_200_reply_is_typed(server: ScriptedAnthropic) -> None:
    server.queue(Reply(200, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    error = failure(provider(server))
    assert error.retryable is True
    assert error.kind == "overloaded_error"


def test_concurrent_samples_share_one_client(server: ScriptedAnthropic) -> None:
    server.default = lambda body: text_reply(f"echo {len(json.dumps(body))}")
    p = provider(server)

    async def many() -> list[Completion]:
        try:
            return await asyncio.gather(*(p.complete(request(i)) for i in range(8)))
        finally:
            await p.aclose()

    done = asyncio.run(many())
    assert len(done) == 8 and all(c.text.startswith("echo ") for c in done)
    assert server.count == 8


@pytest.mark.parametrize(
    ("base", "url"),
    [
        (None, "https://api.anthropic.com/v1/messages"),
        ("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
        ("https://proxy.example/v1/", "https://proxy.example/v1/messages"),
        ("http://127.0.0.1:8080/anthropic", "http://127.0.0.1:8080/anthropic/v1/messages"),
    ],
)
def test_messages_url(base: str | None, url: str) -> None:
    assert messages_url(base) == url


def test_end_to_end_an_overload_is_retried_and_tool_answers_agree(
    server: ScriptedAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.queue(overloaded(retry_after="0"))
    server.default = tool_reply("record_place", {"borough": "Queens", "city": "New York"})
    suite = {
        "version": 1,
        "name": "anthropic",
        "provider": {
            "type": "anthropic",
            "model": "claude-test",
            "base_url": server.base_url,
            "params": {"temperature": 0, "tools": [{"name": "record_place", "input_schema": {"type": "object"}}]},
        },
        "sampling": {"samples": 4, "concurrency": 2, "timeout_s": 10, "retries": 2, "max_retry_wait_s": 0.1},
        "embedding": {"enabled": False},
        "cases": [{"id": "borough", "prompt": "Where was Feynman born?", "answer": {"json": "/borough"}}],
    }
    suite_path = tmp_path / "suite.yml"
    suite_path.write_text(yaml.safe_dump(suite))
    report_path = tmp_path / "report.json"
    code = main(["run", str(suite_path), "--report-json", str(report_path), "--fail-on", "never", "--no-progress"])
    assert code == 0
    case = json.loads(report_path.read_text())["cases"][0]
    assert case["samples_ok"] == 4 and case["sample_errors"] == 0
    assert case["metrics"]["unique_completions"] == 1
    assert case["answers"] == [{"answer": '"Queens"', "count": 4}]  # canonical JSON
    assert server.count == 5  # the overloaded attempt, then four answers
    assert KEY not in report_path.read_text()


def test_an_error_message_is_redacted_before_it_is_cut(server: ScriptedAnthropic) -> None:
    """A key straddling the 300th character of the message leaves nothing of itself (issue 25, item 5)."""
    straddling = "x" * 280 + KEY + " and more"
    server.queue(Reply(200, {"type": "error", "error": {"type": "overloaded_error", "message": straddling}}))
    error = failure(provider(server))
    assert "x" * 280 + "***" in str(error)
    assert not [n for n in range(8, len(KEY)) if KEY[:n] in str(error)]
