"""Secrets: with an API key set, nothing the gate writes or prints contains it."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from stabilitygate.cli import main
from tests.pipeline.conftest import write_suite
from tests.reliability.conftest import Row
from tests.support.openai_server import Fault, ScriptedOpenAI

KEY = "sk-test-SECRET-0123456789abcdef"


def forms(secret: str) -> list[str]:
    return [secret, quote(secret, safe=""), base64.b64encode(f"Bearer {secret}".encode()).decode()]


def run_everything(
    tmp_path: Path,
    base_url: str,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    provider = {
        "type": "openai",
        "model": "m",
        "base_url": base_url,
        "api_key_env": "GATE_KEY",
        "params": {"temperature": 0},
        **({"headers": headers} if headers else {}),
    }
    suite = write_suite(
        tmp_path,
        base_url,
        [{"id": "q", "prompt": "q", "answer": {"choice": ["A", "B"]}}],
        provider=provider,
        sampling={"samples": 4, "retries": 1, "max_retry_wait_s": 0.01, "timeout_s": 2},
    )
    outputs = {name: tmp_path / name for name in ("r.json", "r.md", "j.xml", "s.jsonl")}
    code = main(
        [
            "run",
            str(suite),
            "--no-progress",
            "--report-json",
            str(outputs["r.json"]),
            "--markdown",
            str(outputs["r.md"]),
            "--junit",
            str(outputs["j.xml"]),
            "--samples-out",
            str(outputs["s.jsonl"]),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yml")
    return code, captured.out + captured.err + written


def assert_clean(everything: str) -> None:
    for form in forms(KEY):
        assert form not in everything


@pytest.mark.parametrize("status", [401, 500], ids=["fatal-401", "retried-500"])
def test_key_echoed_in_error_body_never_escapes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    record: Callable[[Row], None],
) -> None:
    monkeypatch.setenv("GATE_KEY", KEY)
    with ScriptedOpenAI({}, default="A", faults=[Fault("echo_auth", status=status)]) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys)
        hits = server.count
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    assert code == 3
    assert "***" in everything  # the echoed key was there, and redacted
    assert_clean(everything)
    record(
        Row(
            "provider echoing the API key in an error body",
            hits,
            1,
            1,
            0,
            "key redacted as *** in every message, report and file",
        )
    )


def test_key_inside_an_httpx_exception_never_escapes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    record: Callable[[Row], None],
) -> None:
    # A header value httpx refuses: its exception message quotes the header, key included.
    monkeypatch.setenv("GATE_KEY", KEY)
    monkeypatch.setenv("GATE_HEADER", KEY + "\r\nInjected: 1")
    with ScriptedOpenAI({}, default="A") as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys, headers={"X-Extra": "${GATE_HEADER}"})
    assert code in (2, 3)
    assert_clean(everything)
    record(Row("API key inside an httpx exception", 1, 1, 1, 0, "exception text redacted before it is recorded"))


def test_key_never_in_a_successful_runs_files_or_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GATE_KEY", KEY)
    with ScriptedOpenAI({}, default="A", api_key=KEY) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys, "--update-baseline")
    assert code == 0
    assert (tmp_path / "suite.baseline.json").exists()
    assert_clean(everything)
