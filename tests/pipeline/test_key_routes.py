"""Where a run sends each key: one log line per host, before the first request (issue 37, item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.cli import main
from stabilitygate.pipeline.key_routes import KeyRoute, key_routes
from tests.pipeline.conftest import write_suite
from tests.support.openai_server import ScriptedOpenAI
from tests.support.suites import parse_suite

SUITE = """\
version: 1
name: routes
provider: {type: openai, model: m, base_url: "https://api.example.com/v1", api_key_env: MAIN_KEY}
equivalence: {judge: {type: openai, model: j, base_url: "http://judge.internal:8080/v1", api_key_env: JUDGE_KEY}}
cases:
  - {id: a, prompt: q}
  - {id: b, prompt: q, equivalence: null}
  - id: c
    prompt: q
    provider: {type: http, url: "https://app.example.com/ask", headers: {X-Token: "${APP_TOKEN}"}}
  - {id: d, prompt: q, provider: {type: command, command: [prog], api_key_env: MAIN_KEY}}
  - {id: e, prompt: q, provider: {api_key_env: UNSET_KEY}}
"""
ENVIRON = {"MAIN_KEY": "k" * 20, "JUDGE_KEY": "j" * 20, "APP_TOKEN": "t" * 20}


def test_each_host_is_named_once_with_the_keys_it_is_sent_and_who_sends_them() -> None:
    loaded = parse_suite(SUITE.replace("equivalence: null", "answer: {choice: [A, B]}"), "suite.yml")
    routes = key_routes(loaded.resolved_cases(), ENVIRON)
    assert [route.host for route in routes] == [
        "api.example.com",
        "app.example.com",
        "judge.internal:8080",
        "the command provider's program (in its environment: it may send them on anywhere)",
    ]
    assert routes[0] == KeyRoute("api.example.com", ("MAIN_KEY",), ("a", "b"))  # e's variable is not set
    assert routes[1].variables == ("APP_TOKEN",) and routes[2].senders[0] == "a's entailment judge"
    assert routes[3].variables == ("MAIN_KEY",) and routes[3].senders == ("d",)


def test_a_line_names_three_senders_and_counts_the_rest() -> None:
    route = KeyRoute("h", ("K",), tuple("abcde"))
    assert route.line() == "keys sent to h: K (by a, b, c and 2 more)"


def test_the_log_names_every_host_before_the_first_request_variants_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variant (or a case) could route the repository's key to any host its suite names, and nothing said so."""
    monkeypatch.setenv("ROUTE_KEY", "route-key-0123456789")
    with (
        ScriptedOpenAI({}, default="A", api_key="another-key-refused") as server,
        ScriptedOpenAI({}, default="A") as other,
    ):
        elsewhere = {"type": "openai", "model": "m", "base_url": other.base_url, "api_key_env": "ROUTE_KEY"}
        cases = [{"id": "q", "prompt": "q", "variants": {"away": {"provider": elsewhere}}}]
        provider = {"type": "openai", "model": "m", "base_url": server.base_url, "api_key_env": "ROUTE_KEY"}
        suite = write_suite(tmp_path, server.base_url, cases, provider=provider, sampling={"samples": 2})
        code = main(["run", str(suite), "--no-progress", "--variants"])
    err = capsys.readouterr().err
    assert code == 3  # the first host refuses the key: every line was said before that
    hosts = [base.split("//")[1].split("/")[0] for base in (server.base_url, other.base_url)]
    lines = [line for line in err.splitlines() if line.startswith("stabilitygate: keys sent to ")]
    assert lines == sorted(f"stabilitygate: keys sent to {host}: ROUTE_KEY (by {who})" for host, who in
                           zip(hosts, ["q", "q@away"], strict=True))  # fmt: skip
    assert err.index("keys sent to") < err.index("error")
