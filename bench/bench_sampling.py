"""How close the sampler comes to ideal concurrency against a server with a fixed latency.

The scripted OpenAI server runs in its own process on loopback (a real API is elsewhere: sharing
the GIL with the client would measure the test server, not the sampler). The ideal wall time for
S samples at concurrency C and latency L is ceil(S / C) x L; the efficiency ratio is measured /
ideal (1.0 is perfect). Targets: < 1.3 for 64 samples at concurrency 8 with 200 ms latency,
<= 1.15 at concurrency 32. The whole bench takes about 25 s.

    .venv/bin/python bench/bench_sampling.py
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import sys
import tempfile
from pathlib import Path

from scripted_server import scripted_server  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # stabilitygate without an install

from stabilitygate.providers.openai import OpenAIConfig, OpenAIProvider  # noqa: E402
from stabilitygate.sampling.sampler import sample_cases  # noqa: E402
from stabilitygate.suite.model import Message, ResolvedCase, Sampling, Thresholds  # noqa: E402

LATENCY_S = 0.2
CASES = 4  # the samples are spread over a few cases, as in a real suite
ROUNDS = 16  # per concurrency level: enough for a stable figure, short enough for CI


def _cases(base_url: str, samples: int) -> list[ResolvedCase]:
    config = OpenAIConfig(type="openai", model="bench", base_url=base_url, params={"temperature": 0})
    return [
        ResolvedCase(
            id=f"case{i}",
            line=None,
            messages=(Message(role="user", content=f"question {i}"),),
            provider=config,
            thresholds=Thresholds(),
            answer=None,
            expected=None,
            samples=samples // CASES + (1 if i < samples % CASES else 0),
        )
        for i in range(CASES)
    ]


async def _measure(base_url: str, samples: int, concurrency: int) -> tuple[float, int]:
    cases = _cases(base_url, samples)
    provider = OpenAIProvider(cases[0].provider)
    try:
        outcome = await sample_cases(
            cases,
            Sampling(samples=2, concurrency=concurrency, timeout_s=30, retries=0),
            {case.id: provider for case in cases},
            on_sample=lambda _sample: None,
        )
    finally:
        await provider.aclose()
    return outcome.wall_s, sum(1 for s in outcome.samples if s.ok)


def efficiency(base_url: str, samples: int, concurrency: int) -> tuple[float, float, int]:
    """(wall seconds, wall / ideal, samples that succeeded)."""
    wall, ok = asyncio.run(_measure(base_url, samples, concurrency))
    return wall, wall / (math.ceil(samples / concurrency) * LATENCY_S), ok


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"latency_s": LATENCY_S, "default": "Queens, New York"}))
        with scripted_server(script) as base_url:
            efficiency(base_url, 16, 8)  # warm-up: imports, first connections
            headline = sorted(efficiency(base_url, 64, 8) for _ in range(3))[1]  # the median of three
            rows = [(64, 8, *headline)]
            for concurrency in (1, 8, 32, 64):
                samples = concurrency * (ROUNDS if concurrency > 1 else 12)
                rows.append((samples, concurrency, *efficiency(base_url, samples, concurrency)))
    print(f"scripted OpenAI server on loopback, {LATENCY_S * 1000:.0f} ms latency, {CASES} cases")
    print(f"{'samples':>7} {'conc':>4} {'wall s':>7} {'ideal s':>7} {'ratio':>6} {'ok':>5}")
    for samples, concurrency, wall, ratio, ok in rows:
        ideal = math.ceil(samples / concurrency) * LATENCY_S
        print(f"{samples:>7} {concurrency:>4} {wall:>7.2f} {ideal:>7.2f} {ratio:>6.3f} {ok:>5}")
    at_32 = statistics.fmean(r[3] for r in rows[1:] if r[1] == 32)
    verdict = "met" if headline[1] < 1.3 and at_32 <= 1.15 else "MISSED"
    print(
        f"64 samples at concurrency 8: {headline[1]:.3f} (target < 1.3); concurrency 32: {at_32:.3f} "
        f"(target <= 1.15): {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
