"""The remedies' exact tests at larger sizes than the test suite runs: false alarms and power.

    .venv/bin/python bench/bench_remedies.py [--runs 1000]

The variants' two-sided test (judge/variants.py) and the concurrency probe's permutation test
(judge/probe.py), each in its own Holm family, on simulated runs: how often something that changes
nothing is called significant (target: at most alpha = 0.05), and how often a real effect is found.
The seeded test-suite versions are tests/judge/test_variants.py and tests/judge/test_probe.py.
"""

from __future__ import annotations

import argparse
import random
import time

from stabilitygate.judge.probe import probe_results
from stabilitygate.judge.variants import MeasuredVariant, compare_variants
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.results import AnswerCount, CaseMeasurement
from stabilitygate.samples import Sample
from stabilitygate.suite.model import Message, ProviderConfig, ResolvedCase, Thresholds

ALPHA = 0.05


def _measured(hits: int, n: int) -> CaseMeasurement:
    rows = tuple(r for r in (AnswerCount("A", hits), AnswerCount("B", n - hits)) if r.count)
    rows = tuple(sorted(rows, key=lambda r: -r.count))
    return CaseMeasurement("c@v", n, n, 0, metrics=Metrics(parsed_agreement=rows[0].count / n), answers=rows)


def _hits(rng: random.Random, rate: float, n: int) -> int:
    return sum(rng.random() < rate for _ in range(n))


def variants_rate(rng: random.Random, rate: float, fixed: float | None, n: int, runs: int) -> float:
    """Share of runs with a significant variant: three drawn at `rate` (one at `fixed` when given)."""
    flagged = 0
    for _ in range(runs):
        own_hits = _hits(rng, rate, n)
        own = Agreement("parsed_agreement", max(own_hits, n - own_hits), n)
        rates = [fixed if fixed is not None else rate, rate, rate]
        variants = [MeasuredVariant("c", f"v{i}", (), n, _measured(_hits(rng, r, n), n)) for i, r in enumerate(rates)]
        found = compare_variants({"c": own}, variants, ALPHA)["c"]
        flagged += found[0].significant if fixed is not None else any(v.significant for v in found)
    return flagged / runs


def _case(n: int) -> ResolvedCase:
    return ResolvedCase(
        id="c", line=None, messages=(Message(role="user", content="p"),),
        provider=ProviderConfig(type="openai", model="m"), thresholds=Thresholds(), answer=None, expected=None,
        samples=n,
    )  # fmt: skip


def probe_rate(rng: random.Random, weights: tuple[int, ...], loaded: tuple[int, ...], n: int, runs: int) -> float:
    """Share of runs the probe says the answers depend on concurrency (alone: `weights`, under load: `loaded`)."""
    labels = [str(i) for i in range(max(len(weights), len(loaded)))]
    flagged = 0
    for _ in range(runs):
        texts = rng.choices(labels[: len(weights)], weights, k=n // 2) + rng.choices(
            labels[: len(loaded)], loaded, k=n - n // 2
        )
        drawn = [Sample(case="c", index=i, text=t) for i, t in enumerate(texts)]
        flagged += probe_results([_case(n)], drawn, alpha=ALPHA)["c"].depends
    return flagged / runs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(30)
    print("| test | regime | N | runs | flagged | target |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    started = time.monotonic()
    for rate, n in [(0.6, 10), (0.6, 20), (0.9, 20), (0.75, 30), (0.95, 50)]:
        share = variants_rate(rng, rate, None, n, args.runs)
        print(f"| variants, none changes anything | agreement {rate} | {n} | {args.runs} | {share:.1%} | <= 5% |")
    for rate, fixed, n in [(0.5, 1.0, 20), (0.6, 1.0, 10), (0.7, 0.95, 20), (0.7, 0.95, 50)]:
        share = variants_rate(rng, rate, fixed, n, args.runs)
        print(f"| variants, one fixes the case | {rate} -> {fixed} | {n} | {args.runs} | {share:.1%} | found |")
    probe_runs = max(args.runs // 3, 1)
    for weights, n in [((6, 4), 10), ((6, 4), 20), ((9, 1), 20), ((1, 1, 1, 1), 20), ((7, 2, 1), 40)]:
        share = probe_rate(rng, weights, weights, n, probe_runs)
        print(f"| probe, no dependence | answers {weights} | {n} | {probe_runs} | {share:.1%} | <= 5% |")
    for loaded, n in [((1, 1), 10), ((1, 1), 20), ((3, 1, 1, 1), 20), ((1, 1), 40)]:
        share = probe_rate(rng, (1,), loaded, n, probe_runs)
        regime = f"under load {loaded}"
        print(f"| probe, stable alone, varies under load | {regime} | {n} | {probe_runs} | {share:.1%} | found |")
    print(f"\n({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
