"""Every benchmark in one command: prints each one's table of figures (ratios measured in one run).

    .venv/bin/python bench/run_all.py            # all (about 3 minutes on 2 cores)
    .venv/bin/python bench/run_all.py sampling   # only those whose name contains a word

The container image figures (bench_image.py) need a local Docker engine and the image that
scripts/container_smoke_test.sh builds; without them that bench says so and exits 0.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = [
    ("sampling efficiency", "bench_sampling.py", []),
    ("cold start", "bench_cold_start.py", []),
    ("a whole run: semantic layer off, cold and warm, against the bare-client floor", "bench_semantic_run.py", []),
    ("scoring throughput, gate overhead, memory", "bench_scoring.py", ["--torch-threads", "1"]),
    ("judging: false failures and power", "bench_judging.py", []),
    ("embedded local model", "bench_local.py", []),
    ("container image: size, pull size, start to first request", "bench_image.py", []),
    ("--changed-only: requests and time saved, one case of 20 changed", "bench_changed_only.py", []),
    ("entailment judge: calls per case with 2, 5 and 20 distinct completions", "bench_entailment.py", []),
    ("huge input files refused from their size", "bench_bounded_reads.py", []),
    ("hostile inputs of issue 25 at their own sizes", "bench_hostile.py", []),
    ("reading and writing a report of 2,000 cases, typed, next to jsonschema", "bench_report_read.py", []),
    ("number reader: agreement with a human reading, cost of hostile texts", "bench_numbers.py", ["--shapes"]),
    ("remedies: the variants' and the probe's exact tests, false alarms and power", "bench_remedies.py", []),
    ("variants: each drawn alone (a budget of its own) against one call a name", "bench_variant_draws.py", []),
    ("pip install in a fresh venv: time, size, first and second semantic run", "bench_install.py", []),
]


def main(words: list[str]) -> int:
    failed = 0
    for title, script, args in BENCHES:
        if words and not any(w in script for w in words):
            continue
        print(f"\n## {title} ({script})\n", flush=True)
        start = time.monotonic()
        code = subprocess.call([sys.executable, str(HERE / script), *args])
        print(f"\n({time.monotonic() - start:.0f} s, exit {code})", flush=True)
        failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
