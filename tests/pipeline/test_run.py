"""`stabilitygate run` end to end against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import Fault, ScriptedOpenAI

FEYNMAN = "Where was Richard Feynman born?"


def test_feynman_with_429s_and_500s_records_exactly_ten_samples(tmp_path: Path, run_cli: RunCli) -> None:
    """Issue 2, what it must show 2: 8 x Queens, 2 x NYC, a 429 every 7th request and a 500 every 11th."""
    script = {FEYNMAN: [("Queens, New York", 8), ("New York City", 2)]}
    faults = [Fault("status", status=429, every=7, retry_after="0.01"), Fault("status", status=500, every=11)]
    with ScriptedOpenAI(script, faults=faults) as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "borough", "prompt": FEYNMAN}])
        samples_out = tmp_path / "s.jsonl"
        code, report = run_cli("run", str(suite), "--samples", "10", "--samples-out", str(samples_out), "--no-progress")
        served = server.count
    assert code == 0 and report is not None
    (case,) = report["cases"]
    assert case["samples_requested"] == 10 and case["samples_ok"] == 10 and case["sample_errors"] == 0
    assert case["metrics"]["unique_completions"] == 2
    assert case["metrics"]["mode_share"] == 0.8
    assert case["metrics"]["tar_raw"] is False
    assert case["completions"] == [{"text": "Queens, New York", "count": 8}, {"text": "New York City", "count": 2}]
    lines = [json.loads(line) for line in samples_out.read_text().splitlines()]
    assert len(lines) == 10 and sorted(s["index"] for s in lines) == list(range(10))
    assert all(s["text"] is not None and s["error"] is None for s in lines)
    assert {s["fingerprint"] for s in lines} == {"fp_scripted"} and {s["model"] for s in lines} == {"scripted-model"}
    assert all(s["usage"]["completion_tokens"] > 0 and s["latency_ms"] >= 0 for s in lines)
    assert served > 10  # the faulted requests were retried, not counted as samples
    assert report["run"]["sampling"]["requests"] == served
    assert report["run"]["sampling"]["retries"] == served - 10


def test_concurrency_bound_holds_across_cases(tmp_path: Path, run_cli: RunCli) -> None:
    cases = [{"id": f"c{i}", "prompt": f"question {i}"} for i in range(4)]
    # The first three requests wait for each other at the server: three are in flight at once, by
    # construction, and a fourth would have to wait for one of them (the bound is what is tested).
    first_wave = threading.Barrier(3, timeout=30)

    def hold_first_wave(body: object, number: int) -> bool:
        if number <= 3:
            first_wave.wait()
        return False

    with ScriptedOpenAI({}, default="same", faults=[Fault("status", when=hold_first_wave)]) as server:
        suite = write_suite(tmp_path, server.base_url, cases)
        code, report = run_cli("run", str(suite), "--concurrency", "3", "--no-progress")
        assert server.max_in_flight == 3
        assert server.count == 40
    assert code == 0 and report is not None
    assert [c["verdict"] for c in report["cases"]] == ["new"] * 4


def test_authentication_refused_is_exit_3_and_key_never_printed(
    tmp_path: Path, run_cli: RunCli, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("E2E_KEY", "sk-wrong-secret-123")
    with ScriptedOpenAI({}, default="x", api_key="sk-right") as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "a", "prompt": "p"}])
        text = suite.read_text().replace("params:", "api_key_env: E2E_KEY\n  params:")
        suite.write_text(text)
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(tmp_path / "r.md"))
    captured = capsys.readouterr()
    assert code == 3 and report is not None and report["verdict"] == "error"
    assert "401" in captured.err
    everything = captured.out + captured.err + json.dumps(report) + (tmp_path / "r.md").read_text()
    assert "sk-wrong-secret-123" not in everything


def test_choice_cases_report_parsed_agreement(tmp_path: Path, run_cli: RunCli) -> None:
    script = {"Pick one": [("The answer is (B).", 7), ("I think A is wrong; the answer is B", 2), ("A", 1)]}
    with ScriptedOpenAI(script) as server:
        case = {"id": "pick", "prompt": "Pick one", "answer": {"choice": ["A", "B"]}, "expected": "B"}
        suite = write_suite(tmp_path, server.base_url, [case])
        code, report = run_cli("run", str(suite), "--no-progress")
    assert code == 0 and report is not None
    metrics = report["cases"][0]["metrics"]
    assert metrics["unique_completions"] == 3 and metrics["parsed_agreement"] == 0.9
    assert metrics["accuracy"] == 0.9 and metrics["any_correct"] is True and metrics["all_correct"] is False
    assert report["cases"][0]["answers"] == [{"answer": "B", "count": 9}, {"answer": "A", "count": 1}]


@pytest.mark.slow
def test_the_embedded_local_model_end_to_end(tmp_path: Path, run_cli: RunCli) -> None:
    """The default of the README's first command: no key, no network, SmolLM2 in-process."""
    suite = tmp_path / "local.yml"
    suite.write_text(
        "version: 1\nname: local-e2e\n"
        "provider: {type: local, params: {temperature: 0, max_tokens: 6}}\n"
        "sampling: {samples: 3, concurrency: 6, timeout_s: 300}\n"
        "embedding: {enabled: false}\n"
        "cases:\n"
        "  - {id: capital, prompt: 'What is the capital of France? One word.'}\n"
        "  - {id: letter, prompt: 'Apple: (A) fruit or (B) vegetable? One letter.', answer: {choice: [A, B]}}\n"
    )
    samples = tmp_path / "s.jsonl"
    code, report = run_cli("run", str(suite), "--no-progress", "--samples-out", str(samples))
    assert code == 0 and report is not None
    assert [c["samples_ok"] for c in report["cases"]] == [3, 3]
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    assert all(s["fingerprint"].startswith("local_") and s["usage"]["completion_tokens"] <= 6 for s in lines)
    assert report["summary"]["completion_tokens"] == sum(s["usage"]["completion_tokens"] for s in lines)


class NeverLoads:
    """A provider whose in-process model load never finishes, and whose close never returns either."""

    def __init__(self) -> None:
        self.stuck = asyncio.Event()

    async def warm_up(self) -> None:
        await self.stuck.wait()

    async def aclose(self) -> None:
        await self.stuck.wait()


def test_a_warm_up_that_never_ends_is_a_provider_error_past_its_bound() -> None:
    from stabilitygate.pipeline.run import _close, _warm_up
    from stabilitygate.providers.interface import ProviderError

    provider: Any = NeverLoads()
    with pytest.raises(ProviderError, match=r"^waited 0.01 s for the provider to load its model"):
        asyncio.run(_warm_up({"c": provider}, limit_s=0.01))
    asyncio.run(_close({"c": provider}, limit_s=0.01))  # returns: a stuck close is left to the exit


def test_sampling_gives_the_runs_own_sigterm_handler_back(tmp_path: Path) -> None:
    """The sampler's loop handles SIGTERM while it samples, then the run's handler is back (issue 25,
    item 8): a SIGTERM while the judge is asked or the comment posted must not kill the process."""
    import signal

    from stabilitygate import api
    from stabilitygate.failures import sigterm_interrupts

    with ScriptedOpenAI({}, default="x") as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "a", "prompt": "q"}])
        with sigterm_interrupts():
            installed = signal.getsignal(signal.SIGTERM)
            assert callable(installed)
            api.run(suite, embedding_cache="off")
            assert signal.getsignal(signal.SIGTERM) is installed
