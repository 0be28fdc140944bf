"""A fast, seeded version of bench/bench_power.py: the adaptive design through the library.

The bench prints the figures (300 runs per line); this checks the same path on 30 seeded runs:
the 0.95 -> 0.60 drop is caught in nearly all of them (about 99% in the bench), nothing unchanged
fails more than a few times, and the pull request costs fewer than `samples` requests per case.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from tests.support.benches import load_bench


def bench() -> ModuleType:
    return load_bench("bench_power")


def test_the_default_design_catches_the_drop_for_fewer_requests() -> None:
    b = bench()
    adaptive = b.DESIGNS[2]
    assert (adaptive.baseline, adaptive.samples, adaptive.max_samples) == (100, 20, 50)
    drop = b.simulate(np.random.default_rng(7), adaptive, b.SCENARIOS[0], 30)
    unchanged = b.simulate(np.random.default_rng(8), adaptive, b.SCENARIOS[2], 30)
    print(
        f"drop caught {drop.caught}/30, nine unchanged wrongly failed {drop.wrongly}/30, "
        f"unchanged runs failed {unchanged.failed}/30, requests per case {drop.requests / 300:.1f}"
    )
    assert drop.caught >= 27  # the bench: about 99%
    assert drop.wrongly + unchanged.failed <= 3  # false alarms: at most alpha in the bench
    assert drop.requests / (30 * b.CASES) < 20 and unchanged.requests / (30 * b.CASES) < 20


def test_one_stage_against_a_small_baseline_misses_the_drop_more_often() -> None:
    b = bench()
    small = b.DESIGNS[0]
    assert (small.baseline, small.samples, small.max_samples) == (20, 20, 20)
    drop = b.simulate(np.random.default_rng(7), small, b.SCENARIOS[0], 30)
    assert drop.requests == 30 * b.CASES * 20  # no checks, no second stage
    assert drop.caught <= 27  # the bench: about 77%


def test_unchanged_pull_requests_on_the_warning_suite_rarely_warn() -> None:
    """Issue 27's suite (ten choice cases at 1.0 down to 0.4, nothing changed): at most 10% of runs
    warn (the bench: 2.7% of 300; the earlier rule warned on 58-74%)."""
    b = bench()
    scenario = next(s for s in b.SCENARIOS if s.name == "the warning suite, unchanged")
    runs = 40
    tally = b.simulate(np.random.default_rng(9), b.DESIGNS[2], scenario, runs)
    print(f"warning suite: {tally.warned}/{runs} runs warned, {tally.failed}/{runs} failed")
    assert tally.warned / runs <= 0.10 + 2 * (0.10 * 0.90 / runs) ** 0.5
