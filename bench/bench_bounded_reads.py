"""What a huge input file costs now: refused from its size, before a byte is read.

Sparse files (no disk space, no time to write) of a report, a samples file and a suite, each over
its limit by gigabytes, are handed to the command a CI job runs (`merge`, `score`, `validate`).
Printed per file: the exit code, the wall time of the whole command (Python start-up and imports
included) and the child's peak RSS; then the refusal alone, in-process, once the modules are
imported. The whole bench takes a few seconds.

    .venv/bin/python bench/bench_bounded_reads.py
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GIB = 1024**3
SUITE = "version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p}]\n"


def sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def timed(argv: list[str]) -> tuple[int, float, float, str]:
    """(exit code, wall seconds, this child's peak RSS in MiB, its last stderr line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return done.returncode, wall, max(peak, before) / 1024, (done.stderr.strip().splitlines() or [""])[-1]


def main() -> int:
    gate = [sys.executable, "-m", "stabilitygate"]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        suite = directory / "suite.yml"
        suite.write_text(SUITE)
        runs = {
            "report.json, 8 GiB (merge)": [*gate, "merge", str(sparse(directory / "report.json", 8 * GIB))],
            "samples.jsonl, 16 GiB (score)": [
                *gate, "score", str(sparse(directory / "samples.jsonl", 16 * GIB)), "--suite", str(suite)
            ],
            "suite.yml, 4 GiB (validate)": [*gate, "validate", str(sparse(directory / "big.yml", 4 * GIB))],
        }  # fmt: skip
        print(f"{'file':32} {'exit':>4} {'wall s':>7} {'peak RSS MiB':>13}  message")
        for name, argv in runs.items():
            code, wall, rss, line = timed(argv)
            print(f"{name:32} {code:>4} {wall:>7.2f} {rss:>13.1f}  {line.replace(tmp, '<tmp>')}")
        print(f"read_report refusing the 8 GiB report in-process: {refusal_ms(directory / 'report.json'):.3f} ms")
    return 0


def refusal_ms(report: Path, repeats: int = 100) -> float:
    """The median time `read_report` takes to refuse `report`, in milliseconds."""
    sys.path.insert(0, str(ROOT))
    from stabilitygate.errors import BadInput
    from stabilitygate.report.read import read_report

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            read_report(report)
        except BadInput:
            times.append((time.perf_counter() - started) * 1000)
    return sorted(times)[len(times) // 2]


if __name__ == "__main__":
    sys.exit(main())
