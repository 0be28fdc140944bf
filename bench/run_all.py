"""Every benchmark in one command: prints each one's table of figures (ratios measured in one run).

    .venv/bin/python bench/run_all.py            # all (about 3 minutes on 2 cores)
    .venv/bin/python bench/run_all.py sampling   # only those whose name contains a word

The container image size is read from a local Docker engine when one answers
(scripts/container_smoke_test.sh builds the image).
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
    ("scoring throughput, gate overhead, memory", "bench_scoring.py", ["--torch-threads", "1"]),
    ("judging: false failures and power", "bench_judging.py", []),
    ("embedded local model", "bench_local.py", []),
]


def image_size(tag: str = "llm-stability-gate:smoke") -> str:
    try:
        proc = subprocess.run(
            ["docker", "image", "ls", "--format", "{{.Size}}", tag], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.TimeoutExpired):
        return "no Docker engine here"
    return proc.stdout.strip() or "image not built (run scripts/container_smoke_test.sh)"


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
    if not words or any("image" in w for w in words):
        print(f"\n## container image\n\nllm-stability-gate:smoke: {image_size()}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
