"""The http provider against a loopback application with an idempotency-key cache."""

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
from stabilitygate.measure.canonical import canonical_json
from stabilitygate.providers.http_app import HttpAppProvider
from stabilitygate.providers.interface import Completion, FatalProviderError, ProviderError, Request
from tests.support.app_server import AnswerApp

TOKEN = "app-token-5f3a9c"
ENV = {"APP_TOKEN": TOKEN}
PER_SAMPLE_KEY = '{"question": {{ prompt|tojson }}, "idempotency_key": {{ idempotency_key|tojson }}}'
ONE_KEY_PER_CASE = '{"question": {{ prompt|tojson }}, "idempotency_key": {{ case_id|tojson }}}'


def request(index: int = 0, *, prompt: str = "Where was Feynman born?", system: str | None = None) -> Request:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return Request(
        case_id="borough",
        index=index,
        messages=tuple(messages),
        model="app-v2",
        params={"temperature": 0},
        idempotency_key=f"borough:{index}",
    )


@pytest.fixture
def app() -> Iterator[AnswerApp]:
    with AnswerApp(token=TOKEN) as running:
        yield running


def provider(app: AnswerApp, environ: Mapping[str, str] = ENV, **config: Any) -> HttpAppProvider:
    config.setdefault("url", app.url("/v1/answer"))
    config.setdefault("api_key_env", "APP_TOKEN")
    config.setdefault("headers", {"Authorization": "Bearer ${api_key}"})
    return HttpAppProvider.create({"type": "http", **config}, environ=environ, timeout_s=5)


def sample(p: HttpAppProvider, requests: list[Request]) -> list[Completion]:
    async def run() -> list[Completion]:
        try:
            return [await p.complete(r) for r in requests]
        finally:
            await p.aclose()

    return asyncio.run(run())


def failure(p: HttpAppProvider, req: Request | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        sample(p, [req or request()])
    return info.value


def test_one_key_per_case_hits_the_cache_so_every_sample_is_the_same(app: AnswerApp) -> None:
    p = provider(app, body=ONE_KEY_PER_CASE, completion_pointer="/data/answer")
    texts = [c.text for c in sample(p, [request(i) for i in range(6)])]
    assert len(set(texts)) == 1
    assert texts[0] == "Answer #1 to: Where was Feynman born?"
    assert (app.misses, app.hits) == (1, 5)


def test_per_sample_keys_miss_the_cache_so_samples_differ(app: AnswerApp) -> None:
    p = provider(app, body=PER_SAMPLE_KEY, completion_pointer="/data/answer")
    texts = [c.text for c in sample(p, [request(i) for i in range(6)])]
    assert len(set(texts)) == 6
    assert app.misses == 6
    assert [r.body["idempotency_key"] for r in app.requests] == [f"borough:{i}" for i in range(6)]


def test_the_same_sample_twice_is_served_from_the_cache(app: AnswerApp) -> None:
    p = provider(app, body=PER_SAMPLE_KEY, completion_pointer="/data/answer")
    first, again = sample(p, [request(2), request(2)])
    assert first.text == again.text
    assert (app.misses, app.hits) == (1, 1)


def test_template_variables_and_tojson_keep_awkward_text_intact(app: AnswerApp) -> None:
    body = (
        '{"question": {{ prompt|tojson }}, "system": {{ system|tojson }}, "n": {{ sample_index }},'
        ' "messages": {{ messages|tojson }}, "model": {{ model|tojson }}, "params": {{ params|tojson }},'
        ' "token": {{ api_key|tojson }}}'
    )
    prompt = 'He said "hi"\nthen </script> \u00e9 \\ {{ not a tag }}'
    sample(provider(app, body=body, completion_pointer="/data/answer"), [request(4, prompt=prompt, system="S")])
    sent = app.requests[0].body
    assert sent == {
        "question": prompt,
        "system": "S",
        "n": 4,
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": prompt}],
        "model": "app-v2",
        "params": {"temperature": 0},
        "token": TOKEN,
    }


def test_the_default_body_sends_everything(app: AnswerApp) -> None:
    done = sample(provider(app, completion_pointer="/data/answer"), [request(1)])[0]
    sent = app.requests[0].body
    assert sent["prompt"] == "Where was Feynman born?"
    assert sent["idempotency_key"] == "borough:1"
    assert sent["sample_index"] == 1 and sent["case_id"] == "borough" and sent["system"] is None
    assert done.text.startswith("Answer #1")


def test_headers_expand_environment_and_request_variables(app: AnswerApp) -> None:
    env = {**ENV, "TENANT": "acme"}
    headers = {
        "Authorization": "Bearer ${api_key}",
        "X-Tenant": "${TENANT}",
        "Idempotency-Key": "${idempotency_key}",
    }
    body = '{"question": {{ prompt|tojson }}}'
    done = sample(
        provider(app, environ=env, headers=headers, body=body, completion_pointer="/data/answer"), [request(7)]
    )[0]
    sent = app.requests[0].headers
    assert sent["authorization"] == f"Bearer {TOKEN}"
    assert sent["x-tenant"] == "acme"
    assert sent["idempotency-key"] == "borough:7"
    assert done.text.startswith("Answer #1")


def test_the_default_pointer_is_the_whole_reply_in_canonical_json(app: AnswerApp) -> None:
    done = sample(provider(app, body=PER_SAMPLE_KEY), [request()])[0]
    assert done.text == canonical_json(json.loads(done.text))
    assert json.loads(done.text) == {
        "data": {"answer": "Answer #1 to: Where was Feynman born?", "cached": False},
        "request_id": 1,
    }


def test_a_structured_answer_is_serialised_canonically(app: AnswerApp) -> None:
    p = provider(app, url=app.url("/v1/structured"), body="{}", completion_pointer="/data/answer")
    assert sample(p, [request()])[0].text == '{"borough":"Queens","n":1}'


def test_get_sends_the_rendered_object_as_query_parameters(app: AnswerApp) -> None:
    p = provider(app, method="GET", body=PER_SAMPLE_KEY, completion_pointer="/data/answer")
    done = sample(p, [request(3, prompt="a & b = c?")])[0]
    received = app.requests[0]
    assert received.method == "GET"
    assert received.body == {"question": "a & b = c?", "idempotency_key": "borough:3"}
    assert done.text == "Answer #1 to: a & b = c?"


def test_a_template_that_is_not_json_is_fatal_and_names_the_template(app: AnswerApp) -> None:
    p = provider(app, body='{"question": {{ prompt }}, "token": "{{ api_key }}"}')
    error = failure(p)
    assert isinstance(error, FatalProviderError)
    assert error.kind == "bad_template"
    assert "provider.body" in str(error) and "tojson" in str(error)
    assert TOKEN not in str(error)
    assert app.requests == []


def test_an_undefined_variable_is_fatal(app: AnswerApp) -> None:
    error = failure(provider(app, body='{"q": {{ promt|tojson }}}'))
    assert isinstance(error, FatalProviderError)
    assert "promt" in str(error)


def test_the_template_is_sandboxed(app: AnswerApp) -> None:
    body = '{"q": {{ "".__class__.__mro__[1].__subclasses__()|length }}}'
    error = failure(provider(app, body=body))
    assert isinstance(error, FatalProviderError)
    assert app.requests == []


def test_a_template_syntax_error_is_bad_input() -> None:
    with pytest.raises(BadInput, match=r"provider\.body: template syntax error at line 1"):
        HttpAppProvider.create({"type": "http", "url": "http://127.0.0.1:1/", "body": '{"q": {{ prompt }'})


def test_a_missing_pointer_target_is_a_bad_body(app: AnswerApp) -> None:
    error = failure(provider(app, body=PER_SAMPLE_KEY, completion_pointer="/data/text"))
    assert error.kind == "bad_body"
    assert "nothing at completion_pointer '/data/text'" in str(error)


def test_a_refused_token_is_fatal_and_not_shown(app: AnswerApp) -> None:
    wrong = "wrong-token-778899"
    error = failure(provider(app, environ={"APP_TOKEN": wrong}, body=PER_SAMPLE_KEY))
    assert isinstance(error, FatalProviderError)
    assert error.status == 401
    assert wrong not in str(error)


def test_a_refusal_names_the_keys_an_http_provider_has(app: AnswerApp) -> None:
    """Its key is `url`: a 404 that said "check base_url and model" sent the reader to keys it does not have."""
    missing = failure(provider(app, url=app.url("/v1/no-such-route"), body="{}"))
    assert isinstance(missing, FatalProviderError) and missing.status == 404
    assert "not found (check url)" in str(missing) and "base_url" not in str(missing)
    refused = failure(provider(app, environ={"APP_TOKEN": "wrong-token-778899"}, body=PER_SAMPLE_KEY))
    assert "check headers and the variable named by api_key_env" in str(refused)


def test_unavailable_is_retryable(app: AnswerApp) -> None:
    error = failure(provider(app, url=app.url("/v1/unavailable"), body="{}"))
    assert error.retryable is True
    assert error.status == 503
    assert error.retry_after == 0.0


def test_an_html_reply_is_a_bad_body(app: AnswerApp) -> None:
    error = failure(provider(app, url=app.url("/v1/html"), body="{}"))
    assert error.kind == "bad_body"


def test_an_unset_header_variable_is_bad_input(app: AnswerApp) -> None:
    with pytest.raises(BadInput, match="APP_SECRET_NOT_SET"):
        provider(app, headers={"X-Key": "${APP_SECRET_NOT_SET}"})


def test_api_key_in_headers_needs_api_key_env(app: AnswerApp) -> None:
    with pytest.raises(BadInput, match="api_key_env"):
        provider(app, api_key_env=None)


def test_a_relative_pointer_is_bad_input(app: AnswerApp) -> None:
    with pytest.raises(BadInput, match="completion_pointer"):
        provider(app, completion_pointer="data/answer")


def test_end_to_end_the_report_counts_what_the_cache_does(
    app: AnswerApp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_TOKEN", TOKEN)
    provider_config = {
        "type": "http",
        "url": app.url("/v1/answer"),
        "api_key_env": "APP_TOKEN",
        "headers": {"Authorization": "Bearer ${api_key}"},
        "completion_pointer": "/data/answer",
    }
    suite = {
        "version": 1,
        "name": "app",
        "provider": provider_config,
        "sampling": {"samples": 5, "concurrency": 2, "timeout_s": 10, "retries": 0},
        "embedding": {"enabled": False},
        "cases": [
            {"id": "cached", "prompt": "Q1", "provider": {"body": ONE_KEY_PER_CASE}},
            {"id": "uncached", "prompt": "Q2", "provider": {"body": PER_SAMPLE_KEY}},
        ],
    }
    suite_path = tmp_path / "suite.yml"
    suite_path.write_text(yaml.safe_dump(suite))
    report_path, samples_path = tmp_path / "report.json", tmp_path / "samples.jsonl"
    code = main(
        [
            "run",
            str(suite_path),
            "--report-json",
            str(report_path),
            "--samples-out",
            str(samples_path),
            "--fail-on",
            "never",
            "--no-progress",
        ]
    )
    assert code == 0
    report = json.loads(report_path.read_text())
    unique = {case["id"]: case["metrics"]["unique_completions"] for case in report["cases"]}
    assert unique == {"cached": 1, "uncached": 5}
    for written in (report_path, samples_path):
        assert TOKEN not in written.read_text()


NESTED_LOOPS = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}{}"


def http_suite(tmp_path: Path, body: str, *, method: str = "POST", timeout_s: float = 10, own: bool = False) -> Path:
    """A suite whose http body template is on line 5 (the suite's) or line 9 (case b's own, `own`)."""
    provider_body = '"{}"' if own else json.dumps(body)
    case_body = f"    provider: {{body: {json.dumps(body)}}}\n" if own else ""
    text = (
        "version: 1\nname: app\n"
        "provider:\n  type: http\n"
        f"  body: {provider_body}\n"
        f"  url: http://127.0.0.1:9/never\n  method: {method}\n"
        f"sampling: {{samples: 4, timeout_s: {timeout_s}, retries: 0}}\n"
        "cases:\n  - {id: a, prompt: 'Where was Feynman born?'}\n  - id: b\n    prompt: 'Why?'\n" + case_body
    )
    path = tmp_path / "suite.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("body", "settings", "said"),
    [
        (
            '{"ticket": {{ prompt }}}',
            {},
            "the template did not render valid JSON (Expecting value at line 1 column 12)",
        ),
        ('{"ticket": {{ ticket|tojson }}}', {}, "the template failed to render: 'ticket' is undefined"),
        ('{"q": {{ prompt }', {}, "template syntax error at line 1"),
        ('["a list"]', {"method": "GET"}, "with method GET the template must render a JSON object"),
        (NESTED_LOOPS, {}, "the template did more than 100,000 loop steps and calls (nested loops?)"),
    ],
)
def test_template_mistakes_are_exit_2_at_validate_at_the_body_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, settings: dict[str, Any], said: str
) -> None:
    for own, line, case in ((False, 5, "a"), (True, 13, "b")):
        suite = http_suite(tmp_path, body, own=own, **settings)
        for command in ("validate", "run"):
            assert main([command, str(suite)]) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1, err
            assert err[0].startswith(f"stabilitygate: error: {suite}:{line}: case {case!r}: provider.body: "), err[0]
            assert said in err[0]
