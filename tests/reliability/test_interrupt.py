"""SIGINT / SIGTERM mid-run: a valid samples file with every sample received, no baseline, resumable."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.conftest import write_suite
from tests.reliability.conftest import GUARD_S, ROOT, Row, run_gate
from tests.support.openai_server import Fault, ScriptedOpenAI

SIGNAL_AT_REQUEST = 9  # concurrency 2: when the 9th request comes in, at least 7 samples are in the file


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupted_run_keeps_every_sample(tmp_path: Path, sig: signal.Signals, record: Callable[[Row], None]) -> None:
    samples, report, baseline = tmp_path / "s.jsonl", tmp_path / "r.json", tmp_path / "suite.baseline.json"
    reached = threading.Event()

    def watch(body: Mapping[str, Any], number: int) -> bool:  # faults nothing: tells the test how far the run is
        if number >= SIGNAL_AT_REQUEST:
            reached.set()
        return False

    with ScriptedOpenAI({"q": [("a", 3), ("b", 1)]}, latency_s=0.1, faults=[Fault("status", when=watch)]) as server:
        suite = write_suite(
            tmp_path,
            server.base_url,
            [{"id": "q", "prompt": "q"}, {"id": "r", "prompt": "r"}],
            sampling={"samples": 200, "concurrency": 2, "timeout_s": 60},  # no loopback reply nears it: no retries
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stabilitygate",
                "run",
                str(suite),
                "--no-progress",
                "--update-baseline",
                "--samples-out",
                str(samples),
                "--report-json",
                str(report),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # A worker sends its next request only once its last sample is written, so each of the two
        # workers has at most one request unwritten.
        assert reached.wait(GUARD_S), "the run never got that far"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=GUARD_S)
        served = server.count
    assert proc.returncode == 3, err
    assert "Traceback" not in err and "interrupted" in err
    lines = [json.loads(line) for line in samples.read_text().splitlines()]  # every line whole
    assert SIGNAL_AT_REQUEST - 2 <= len(lines) < 400
    assert served - len(lines) <= 2  # at most the requests in flight when the signal came
    data = json.loads(report.read_text())
    assert data["run"]["sampling"]["interrupted"] is True and data["verdict"] == "error"
    assert sum(c["samples_ok"] for c in data["cases"]) == len(lines)
    assert not baseline.exists()
    assert "not written" in data["run"]["baseline"]["status"]
    # Resuming: the samples file scores on its own.
    code, rescored = run_gate("score", str(samples), "--suite", str(suite), report=tmp_path / "again.json")
    assert code == 0 and rescored is not None
    assert sum(c["samples_ok"] for c in rescored["cases"]) == len(lines)
    record(
        Row(
            f"{sig.name} mid-run",
            1,
            1,
            1,
            0,
            "samples file whole, report says interrupted, baseline not written, `score` resumes",
        )
    )
