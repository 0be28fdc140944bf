"""False alarms of the run's family in every regime: seeded null simulation (issue 27, item 1).

Ten unchanged cases a run. Each case's answer is its modal answer with a fixed chance (the modal
rate) and otherwise either scattered (every other answer a different one: modal shares are floored at
1/n) or no answer at all (a parse failure: shares can be 0); the baseline and the pull request draw
from the same distribution. Each case is tested as the gate tests it (judge/case_test.py, its rules
drop, answer change and parsed share), through its checks when the pull request has a second stage
(judge/stages.py: the same `goes_on` and path weights), and the tested cases are corrected together
(judge/discrete.py). A false alarm is a run in which any case's corrected p-value is below alpha
(whether its change also reached `min_drop` or not: the stricter count).

Printed: the false-alarm rate of every cell (modal rate x floored or not x sizes x second stage) with
its standard error, as the table of docs/design.md §6, "The family". The test suite runs a few
decisive cells of the same simulation (tests/judge/test_family.py).

Run: .venv/bin/python bench/bench_false_alarms.py [--runs 2000] [--seed 27]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.judge.case_test import Rule, case_test
from stabilitygate.judge.checks import modal_counts
from stabilitygate.judge.discrete import FamilyTest, step_down
from stabilitygate.judge.pool import Counted, Pool, Runs, pool_of
from stabilitygate.judge.stages import CasePath, StageDesign, goes_on
from stabilitygate.judge.wording import same_value
from stabilitygate.suite.sizes import MAX_FACTOR

ALPHA = 0.05
CASES = 10
RULES: tuple[Rule, ...] = ("drop", "answer", "parsed")
RATES = (0.05, 0.15, 0.3, 0.5, 0.7, 0.9, 0.95)
SIZES = ((10, 10), (20, 20), (100, 20))  # (baseline, pull request): the default is 5 x samples


@dataclass(frozen=True)
class Regime:
    rate: float  # the modal answer's chance
    floored: bool  # other answers scattered (True) or parse failures (False)
    n_base: int
    n_pr: int
    staged: bool  # a second stage up to MAX_FACTOR x samples, with its checks

    @property
    def design(self) -> StageDesign:
        last = int(MAX_FACTOR * self.n_pr) if self.staged else self.n_pr
        return StageDesign(self.n_pr, last)

    def __str__(self) -> str:
        other = "scattered" if self.floored else "failures"
        stage = f"up to {self.design.last}" if self.staged else "one stage"
        return f"rate {self.rate:.2f}, {other}, {self.n_base}/{self.n_pr} {stage}"


def pool(k_base: int, n_base: int, k_now: int, n_now: int, floored: bool) -> Pool:
    """The case's pool: k of n give the modal answer in each run, the rest scattered or unparsed."""
    before = [Counted("A", k_base)] if k_base else []
    now = [Counted("A", k_now)] if k_now else []
    failures = (0, 0) if floored else (n_base - k_base, n_now - k_now)
    return pool_of(Runs(before, now, n_base, n_now, failures), same_value)


def case_test_of(rng: np.random.Generator, regime: Regime) -> FamilyTest | None:
    """One unchanged case, sampled and tested; None when it stopped at a check (it cannot fail)."""
    design, n_base = regime.design, regime.n_base
    k_base = int(rng.binomial(n_base, regime.rate))
    answers = rng.random(design.last) < regime.rate
    for check in design.checks:
        x = int(answers[:check].sum())
        before, now = modal_counts(pool(k_base, n_base, x, check, regime.floored))
        if not goes_on(design, check, before, n_base, now, check):
            return None
    n = design.last
    path = CasePath(design, n, design.checks)
    test = case_test(pool(k_base, n_base, int(answers[:n].sum()), n, regime.floored), RULES, path.survival(n_base, n))
    return FamilyTest(test.p_value, test.support)


def alarmed(rng: np.random.Generator, regime: Regime, cases: int = CASES) -> bool:
    tests = [t for t in (case_test_of(rng, regime) for _ in range(cases)) if t is not None]
    family = step_down(tests)
    return any(family.adjusted(i) < ALPHA for i in range(len(tests)))


@dataclass(frozen=True)
class Rate:
    alarms: int
    runs: int

    @property
    def share(self) -> float:
        return self.alarms / self.runs

    @property
    def standard_error(self) -> float:
        """Of the estimate, at alpha: what "at most alpha" is checked against (alpha + 2 SE)."""
        return math.sqrt(ALPHA * (1 - ALPHA) / self.runs)


def false_alarms(regime: Regime, runs: int, seed: int) -> Rate:
    rng = np.random.default_rng(seed)
    return Rate(sum(alarmed(rng, regime) for _ in range(runs)), runs)


def regimes() -> list[Regime]:
    return [
        Regime(rate, floored, n_base, n_pr, staged)
        for n_base, n_pr in SIZES
        for staged in (False, True)
        for floored in (True, False)
        for rate in RATES
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"{args.runs} null runs per cell, {CASES} cases, alpha {ALPHA}; false-alarm rate (SE at alpha)")
    print("| sizes | second stage | other answers | " + " | ".join(f"{r:.2f}" for r in RATES) + " |")
    print("| --- | --- | --- |" + " --- |" * len(RATES))
    cells = regimes()
    for start in range(0, len(cells), len(RATES)):
        row = cells[start : start + len(RATES)]
        first = row[0]
        rates = [false_alarms(r, args.runs, args.seed + i).share for i, r in enumerate(row, start)]
        stage = f"up to {first.design.last}" if first.staged else "none"
        other = "scattered" if first.floored else "failures"
        print(f"| {first.n_base}/{first.n_pr} | {stage} | {other} | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.runs)
    took = time.perf_counter() - started
    print(f"\nSE of each cell at alpha: {se:.4f}; alpha + 2 SE = {ALPHA + 2 * se:.4f} ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
