"""What `--changed-only` saves: a 20-case suite where one case changed, against a scripted server.

The scripted OpenAI server runs in its own process on loopback with a fixed latency; the gate runs
as the command a CI job runs. Printed side by side in one run: requests made and wall time of a
full run, of `--changed-only`, and of `--changed-only` with 2 canaries (expect 1/20 of the
requests, plus 2/20 for the canaries). The whole bench takes about 30 s.

    .venv/bin/python bench/bench_changed_only.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from scripted_server import scripted_server  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
LATENCY_S = 0.2
CASES = 20
SAMPLES = 10
CONCURRENCY = 8


def server_script(directory: Path) -> Path:
    script = {"completions": {f"q{i}": [[f"answer {i}", 1]] for i in range(CASES)}, "default": "edited",
              "latency_s": LATENCY_S}  # fmt: skip
    path = directory / "script.json"
    path.write_text(json.dumps(script))
    return path


def write_suite(directory: Path, base_url: str, *, edited: str | None, canaries: int) -> Path:
    cases = [{"id": f"c{i}", "prompt": f"q{i}" + (" (edited)" if f"c{i}" == edited else "")} for i in range(CASES)]
    suite = {
        "version": 1,
        "name": "bench",
        "provider": {"type": "openai", "model": "bench", "base_url": base_url},
        "sampling": {"samples": SAMPLES, "concurrency": CONCURRENCY, "canaries": canaries},
        "embedding": {"enabled": False},
        "cases": cases,
    }
    path = directory / "suite.yml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def gate(suite: Path, *flags: str) -> tuple[float, dict[str, object]]:
    """Wall time of one `stabilitygate run` (interpreter start included) and its report."""
    report = suite.parent / "report.json"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "stabilitygate", "run", str(suite), "--no-progress", "--report-json", str(report),
         *flags],
        cwd=ROOT, check=False, capture_output=True, env={**os.environ, "GITHUB_SHA": "bench-commit"},
    )  # fmt: skip
    return time.perf_counter() - started, json.loads(report.read_text())


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        with scripted_server(server_script(directory)) as base_url:
            write_suite(directory, base_url, edited=None, canaries=2)
            gate(directory / "suite.yml", "--update-baseline")
            rows = []
            for label, flags, canaries in (
                ("full run", (), 0),
                ("--changed-only", ("--changed-only",), 0),
                ("--changed-only, canaries: 2", ("--changed-only",), 2),
            ):
                suite = write_suite(directory, base_url, edited="c7", canaries=canaries)
                seconds, report = gate(suite, *flags)
                sampling = report["run"]["sampling"]  # type: ignore[index]
                rows.append((label, int(sampling["requests"]), seconds))
    full_requests, full_seconds = rows[0][1], rows[0][2]
    print(f"{CASES} cases x {SAMPLES} samples, one case changed; server latency {LATENCY_S * 1000:.0f} ms, "
          f"concurrency {CONCURRENCY}\n")  # fmt: skip
    print("| run | requests | share of the full run | wall time | time saved |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, requests, seconds in rows:
        print(
            f"| {label} | {requests} | {requests / full_requests:.2f} | {seconds:.2f} s | "
            f"{full_seconds - seconds:+.2f} s |"
        )
    ok = rows[1][1] == SAMPLES and rows[2][1] == 3 * SAMPLES
    print(f"\nexpected 1/20 and 3/20 of the requests: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
