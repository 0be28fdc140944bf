"""What drawing each variant of each case alone costs against one sampler call per variant name.

`run --variants` draws every variant of every case in a sampler call of its own, so that each has a
request budget (and a fate) of its own (docs/design.md §16.1): one variant whose requests keep
failing no longer starves the others. The price is concurrency across cases: a call of N samples at
concurrency C waits out its last partial round before the next variant starts. Measured side by
side in one run against the scripted server in its own process (50 ms latency): K cases with one
variant each, N samples, concurrency C; both ways draw the same requests. Median of 3 rounds.

    .venv/bin/python bench/bench_variant_draws.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scripted_server import scripted_server  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # stabilitygate without an install

from stabilitygate.cases import resolve  # noqa: E402
from stabilitygate.pipeline.run import draw_samples  # noqa: E402
from stabilitygate.suite.load import parse_suite_file  # noqa: E402
from stabilitygate.suite.model import ResolvedCase, Sampling  # noqa: E402

LATENCY_S = 0.05
ROUNDS = 3


def _variants(base_url: str, cases: int, samples: int) -> list[ResolvedCase]:
    """The cases' one variant each, as the suite file resolves them (`CASE@seeded`)."""
    suite = {
        "version": 1,
        "name": "bench",
        "provider": {"type": "openai", "model": "bench", "base_url": base_url, "params": {"temperature": 0}},
        "sampling": {"samples": samples},
        "variants": {"seeded": {"params": {"seed": 7}}},
        "cases": [{"id": f"case{i}", "prompt": f"question {i}"} for i in range(cases)],
    }
    loaded = resolve(parse_suite_file(json.dumps(suite), "bench.yml"))  # JSON is YAML
    return [variant.case for found in loaded.variants.values() for variant in found]


def _timed(variants: list[ResolvedCase], settings: Sampling, grouped: bool) -> float:
    started = time.perf_counter()
    for group in [variants] if grouped else [[v] for v in variants]:
        drawn = draw_samples(group, settings, {}, secrets=[])
        assert sum(s.text is not None for s in drawn.samples) == sum(v.samples for v in group)
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"default": "OK", "latency_s": LATENCY_S}))
        with scripted_server(script) as base_url:
            print(f"{'cases':>5} {'N':>3} {'C':>3} {'one call a name':>16} {'one a variant':>14} {'ratio':>6}")
            for cases, samples, concurrency in ((8, 10, 8), (8, 20, 8), (20, 10, 4), (20, 10, 16)):
                variants = _variants(base_url, cases, samples)
                settings = Sampling(samples=2, concurrency=concurrency, timeout_s=30, retries=0)
                pairs = [(_timed(variants, settings, True), _timed(variants, settings, False)) for _ in range(ROUNDS)]
                grouped = statistics.median(p[0] for p in pairs)
                alone = statistics.median(p[1] for p in pairs)
                ratio = alone / grouped
                print(f"{cases:>5} {samples:>3} {concurrency:>3} {grouped:>15.2f}s {alone:>13.2f}s {ratio:>6.2f}")


if __name__ == "__main__":
    main()
