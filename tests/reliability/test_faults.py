"""Provider faults, each injected by the loopback server: the run survives and loses no sample it received."""

from __future__ import annotations

import json
import socket
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.conftest import write_suite
from tests.reliability.conftest import Row, run_gate
from tests.support.openai_server import Fault, ScriptedOpenAI

ANSWERED = {"delay", "length"}  # faults that still deliver a valid completion
# More retries than any scenario injects faults, so that no sample can run out of them however the
# faulted request numbers fall among the concurrent samples; a timeout no loopback reply comes near.
FAST = {"samples": 10, "concurrency": 4, "timeout_s": 30, "retries": 12, "max_retry_wait_s": 0.05}
HUNG_TIMEOUT_S = 1.0  # the one scenario that needs the per-request timeout to fire: a 30 s hang


@pytest.fixture(autouse=True)
def no_backoff_time(backoff_waits: list[float]) -> list[float]:
    """Every run here records its retry waits instead of sleeping them."""
    return backoff_waits


def injected(server: ScriptedOpenAI) -> tuple[int, int]:
    """(requests hit by a fault, valid completions the server delivered)."""
    hit = served = 0
    for req in server.requests:
        fault = next((f for f in server.faults if f.matches(req.body or {}, req.number)), None)
        hit += fault is not None
        served += fault is None or fault.action in ANSWERED
    return hit, served


def ok_lines(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [s for s in lines if s["text"] is not None]


def scenario(
    tmp_path: Path,
    faults: Sequence[Fault],
    *,
    sampling: dict[str, Any] | None = None,
    cases: list[dict[str, Any]] | None = None,
    latency_s: float = 0.0,
    **server: Any,
) -> tuple[int, dict[str, Any] | None, ScriptedOpenAI, Path]:
    samples = tmp_path / "samples.jsonl"
    samples.unlink(missing_ok=True)
    with ScriptedOpenAI(
        {"q": [("Queens, New York", 8), ("New York City", 2)]}, faults=faults, latency_s=latency_s, **server
    ) as srv:
        suite = write_suite(
            tmp_path, srv.base_url, cases or [{"id": "q", "prompt": "q"}], sampling={**FAST, **(sampling or {})}
        )
        code, report = run_gate(
            "run", str(suite), "--no-progress", "--samples-out", str(samples), report=tmp_path / "report.json"
        )
    return code, report, srv, samples


RECOVERABLE: dict[str, tuple[list[Fault], str]] = {
    "connection accepted, never answered": (
        [Fault("hang", at={2, 5, 9}, delay_s=30)],
        "per-request timeout, retried",
    ),  # see HUNG_TIMEOUT_S
    "connection reset mid-request": ([Fault("reset", every=3)], "retried"),
    "429 storm with Retry-After": (
        [Fault("status", status=429, when=lambda body, n: n <= 12, retry_after="0.02")],
        "Retry-After honoured, retried",
    ),
    "bursts of 500/502/503": (
        [
            Fault("status", status=500, at={1, 2, 3}),
            Fault("status", status=502, at={6, 7}),
            Fault("status", status=503, at={10, 11, 12}),
        ],
        "retried with backoff",
    ),
    "truncated body": ([Fault("truncated", every=4)], "retried"),
    "body not JSON": ([Fault("not_json", every=3)], "retried"),
    "JSON of the wrong shape (no choices)": ([Fault("wrong_shape", every=3)], "retried"),
    "content null": (
        [
            Fault(
                "status", status=200, every=4, body='{"choices": [{"message": {"role": "assistant", "content": null}}]}'
            )
        ],
        "retried",
    ),
}


@pytest.mark.parametrize("kind", list(RECOVERABLE))
def test_recoverable_fault_loses_nothing(tmp_path: Path, kind: str, record: Callable[[Row], None]) -> None:
    faults, note = RECOVERABLE[kind]
    hung = any(f.action == "hang" for f in faults)
    code, report, server, samples = scenario(tmp_path, faults, sampling={"timeout_s": HUNG_TIMEOUT_S} if hung else {})
    hit, served = injected(server)
    received = ok_lines(samples)
    assert hit > 0
    assert code == 0 and report is not None
    (case,) = report["cases"]
    assert case["samples_ok"] == 10 and case["metrics"]["unique_completions"] == 2
    assert len(received) == served == 10  # every completion the server delivered is in the samples file
    assert report["run"]["sampling"]["retries"] == hit  # each fault cost one retry, nothing else did
    record(Row(kind, hit, 1, 1, served - len(received), note))


def test_retry_after_is_honoured_and_capped(
    tmp_path: Path, record: Callable[[Row], None], backoff_waits: list[float]
) -> None:
    # Honoured: 0.3 s asked by each of three 429s in a row on one sample, 0.3 s waited each time.
    faults = [Fault("status", status=429, at={1, 2, 3}, retry_after="0.3")]
    code, _, _, _ = scenario(tmp_path, faults, sampling={"concurrency": 1, "samples": 2, "max_retry_wait_s": 5})
    assert code == 0 and backoff_waits == [0.3, 0.3, 0.3]
    # Capped: an hour asked, max_retry_wait_s 0.1 given: the run waits 0.1 s each time.
    backoff_waits.clear()
    faults = [Fault("status", status=429, every=2, retry_after="3600")]
    code, report, server, samples = scenario(tmp_path, faults, sampling={"max_retry_wait_s": 0.1})
    assert code == 0 and report is not None
    hit, served = injected(server)
    assert backoff_waits == [0.1] * hit
    assert report["run"]["sampling"]["retries"] == hit
    record(
        Row(
            "429 with Retry-After: 3600 (capped)",
            hit + 3,
            2,
            2,
            served - len(ok_lines(samples)),
            "waits capped by max_retry_wait_s, retries reported",
        )
    )


def test_finish_reason_length_is_kept_and_reported(tmp_path: Path, record: Callable[[Row], None]) -> None:
    code, report, server, samples = scenario(tmp_path, [Fault("length", every=2)])
    assert code == 0 and report is not None
    (case,) = report["cases"]
    assert case["samples_ok"] == 10 and case["metrics"]["length_cut"] == 5
    assert case["finish_reasons"].get("length") == 5
    assert any("finish_reason length" in note for note in case["notes"])
    hit, served = injected(server)
    record(
        Row(
            "finish_reason: length",
            hit,
            1,
            1,
            served - len(ok_lines(samples)),
            "kept, counted in length_cut, noted in the report",
        )
    )


def test_ten_megabyte_completion_is_refused_with_bounded_memory(tmp_path: Path, record: Callable[[Row], None]) -> None:
    tracemalloc.start()
    try:
        code, report, server, samples = scenario(
            tmp_path, [Fault("huge", at={1}, size=10 * 1024 * 1024)], sampling={"samples": 4}
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report is not None and code == 0
    (case,) = report["cases"]
    assert case["samples_ok"] + case["sample_errors"] == 4
    assert peak < 64 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    hit, served = injected(server)
    record(
        Row(
            "10 MB completion",
            hit,
            1,
            1,
            served - len(ok_lines(samples)),
            f"refused past the 8 MiB body limit, peak traced memory {peak / 2**20:.1f} MiB",
        )
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("kind", "base_url"),
    [("DNS failure", "http://no-such-host.invalid/v1"), ("connection refused", None)],
)
def test_unreachable_provider_is_exit_3_after_its_retries(
    tmp_path: Path,
    kind: str,
    base_url: str | None,
    record: Callable[[Row], None],
    capsys: pytest.CaptureFixture[str],
    backoff_waits: list[float],
) -> None:
    url = base_url or f"http://127.0.0.1:{free_port()}/v1"
    suite = write_suite(tmp_path, url, [{"id": "q", "prompt": "q"}], sampling={**FAST, "samples": 4, "retries": 2})
    code, report = run_gate("run", str(suite), "--no-progress", report=tmp_path / "r.json")
    err = capsys.readouterr().err
    assert code == 3 and report is not None and report["verdict"] == "error"
    assert report["cases"][0]["verdict"] == "error" and report["cases"][0]["sample_errors"] == 4
    assert "Traceback" not in err
    # Three attempts per sample and two backoff waits between them: then the case gives up.
    assert report["run"]["sampling"]["requests"] == 12 and len(backoff_waits) == 8
    record(Row(kind, 12, 1, 1, 0, "retried, then case `error`, exit 3"))


def test_persistent_failure_past_max_sample_errors_is_error(tmp_path: Path, record: Callable[[Row], None]) -> None:
    cases: list[dict[str, Any]] = [
        {"id": "broken", "prompt": "broken", "thresholds": {"max_sample_errors": 2}},
        {"id": "fine", "prompt": "q"},
    ]
    faults = [Fault("status", status=500, prompt="broken")]
    code, report, server, samples = scenario(tmp_path, faults, cases=cases, sampling={"retries": 1})
    assert code == 3 and report is not None
    verdicts = {c["id"]: c for c in report["cases"]}
    assert verdicts["broken"]["verdict"] == "error" and verdicts["fine"]["samples_ok"] == 10
    assert any("10" in r and "failed" in r for r in verdicts["broken"]["reasons"])
    hit, served = injected(server)
    assert served - len(ok_lines(samples)) == 0
    record(
        Row(
            "a case failing every request",
            hit,
            1,
            1,
            0,
            "samples recorded as failed with their reason; case `error` past max_sample_errors, exit 3",
        )
    )


def test_request_budget_stops_a_cost_runaway(tmp_path: Path, record: Callable[[Row], None]) -> None:
    faults = [Fault("status", status=500, every=2)]
    code, report, server, samples = scenario(tmp_path, faults, sampling={"max_requests": 12, "retries": 10})
    assert code == 3 and report is not None and report["verdict"] == "error"
    assert server.count <= 12
    assert report["run"]["sampling"]["budget_exhausted"] is True
    assert report["run"]["sampling"]["requests"] == server.count
    hit, served = injected(server)
    assert served == len(ok_lines(samples))
    record(Row("cost runaway (max_requests 12)", hit, 1, 1, 0, "sampling stopped at the budget, reported"))


def test_lone_surrogate_in_a_completion_is_written_as_replacement(tmp_path: Path) -> None:
    body = '{"choices": [{"message": {"role": "assistant", "content": "bad \\ud800 text"}, "finish_reason": "stop"}]}'
    code, report, _, samples = scenario(tmp_path, [Fault("status", status=200, body=body)], sampling={"samples": 2})
    assert code == 0 and report is not None
    assert report["cases"][0]["completions"] == [{"text": "bad \ufffd text", "count": 2}]
    assert len(ok_lines(samples)) == 2


def test_baseline_never_written_from_a_run_that_could_not_measure(tmp_path: Path) -> None:
    faults = [Fault("status", status=500, prompt="broken")]
    cases = [{"id": "broken", "prompt": "broken"}, {"id": "fine", "prompt": "q"}]
    samples = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({}, faults=faults) as srv:
        suite = write_suite(tmp_path, srv.base_url, cases, sampling={**FAST, "retries": 1})
        code, report = run_gate(
            "run",
            str(suite),
            "--no-progress",
            "--update-baseline",
            "--samples-out",
            str(samples),
            report=tmp_path / "report.json",
        )
    assert code == 3 and report is not None and report["verdict"] == "error"
    assert not (tmp_path / "suite.baseline.json").exists()
    assert "not written" in report["run"]["baseline"]["status"]
