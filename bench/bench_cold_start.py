"""Cold start: `stabilitygate --help` and `validate` wall time, and proof that torch stays unloaded.

Each command runs in a fresh interpreter (as CI runs it), five times; the median is reported.
Target: under 0.5 s wall, with no torch / sentence_transformers in sys.modules.

    .venv/bin/python bench/bench_cold_start.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "suite.yml"
PROBE = (
    "import sys; from stabilitygate.cli import main; code = main({args!r}); "
    "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules); "
    "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n'); sys.exit(code)"
)


def timed(args: list[str]) -> tuple[float, str]:
    walls, heavy = [], ""
    for _ in range(5):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", PROBE.format(args=args)], cwd=ROOT, capture_output=True, text=True, check=False
        )
        walls.append(time.perf_counter() - start)
        heavy = next(line[6:] for line in proc.stderr.splitlines() if line.startswith("HEAVY="))
    return statistics.median(walls), heavy or "none"


def main() -> None:
    print("| command | median wall (s) | target | heavy modules loaded |")
    print("| --- | ---: | --- | --- |")
    for label, args in (("stabilitygate --help", ["--help"]), ("stabilitygate validate", ["validate", str(SUITE)])):
        wall, heavy = timed(args)
        verdict = "met" if wall < 0.5 and heavy == "none" else "MISSED"
        print(f"| {label} | {wall:.3f} | < 0.5 ({verdict}) | {heavy} |")


if __name__ == "__main__":
    main()
