"""False alarms, power and requests per case of the pull-request run, by design (issue 21's targets).

Seeded simulation through the library: each simulated run records a baseline (`baseline_from_run`
on `measure_cases`), then samples a pull request check by check with `pipeline.stages.draw_in_stages`
(its checks made by `pipeline.evaluate.stage_checks`, as `stabilitygate run` makes them), and judges
it with the paths read back from the samples (`read_stages`), as `stabilitygate score` does. Samples
are synthetic choice answers ("The answer is A."), so no server is involved.

Scenarios, ten choice cases (answers A-D; the rest of each case's mass spread evenly over B-D):
- 0.95 -> 0.60: nine cases unchanged at 0.95, one dropping from 0.95 to 0.60;
- 0.90 -> 0.70: nine unchanged at 0.90, one dropping from 0.90 to 0.70;
- unchanged: all ten unchanged (at 0.95, then at 0.90): the false-alarm rate of a whole run.

Designs: one stage of 20 against a baseline of 20, one stage of 20 against the default baseline
(5 x 20 = 100), and the default design (baseline 100, samples 20, max_samples 2.5 x 20 = 50: checks
at 10, 20, 30 and 40). Targets (issue 27; samples 20, default baseline): power >= 0.98 on 0.95 ->
0.60, >= 0.50 on 0.90 -> 0.70, false alarms <= alpha (0.05), pull-request requests per case <= 20
on average.

`--table` prints instead the exact power table of docs/design.md (no simulation): a case's power
over both runs' draws, at alpha / 10 (Bonferroni over ten cases: the least level a case of ten is
held to), by baseline N, pull-request design and drop.

Run: .venv/bin/python bench/bench_power.py [--runs 300] [--seed 21] [--table]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.judge.baseline import Baseline, baseline_from_run
from stabilitygate.judge.exact import binomial_pmf
from stabilitygate.judge.power import power
from stabilitygate.judge.stages import StageDesign
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.pipeline.evaluate import measure_cases, stage_checks
from stabilitygate.pipeline.stages import draw_in_stages, read_stages
from stabilitygate.report.model import SamplingFacts
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds

CASES = 10
LABELS = ("A", "B", "C", "D")
REGRESSION = Regression()


def power_over_baselines(
    n_base: int, design: StageDesign, rate_base: float, rate_now: float, level: float, min_drop: float
) -> float:
    """The power over both runs' draws: the baseline at rate_base, the pull request at rate_now (a
    figure of this bench's table; the gate itself only knows the recorded baseline)."""
    weights = binomial_pmf(n_base, rate_base)
    return float(
        sum(w * power(k, n_base, design, rate_now, level, min_drop) for k, w in enumerate(weights) if w > 1e-12)
    )


@dataclass(frozen=True)
class Design:
    name: str
    baseline: int
    samples: int
    max_samples: int


DESIGNS = (
    Design("one stage: baseline 20, PR 20", 20, 20, 20),
    Design("one stage: baseline 100, PR 20", 100, 20, 20),
    Design("the default: baseline 100, PR 20 up to 50 (checks at 10, 20, 30, 40)", 100, 20, 50),
)


@dataclass(frozen=True)
class Scenario:
    name: str
    stable: float  # agreement of the unchanged cases
    before: float  # the changing case's agreement in the baseline
    after: float  # and now (== before: nothing changed)
    others: tuple[float, ...] = ()  # the nine other cases' agreements, when they differ from `stable`

    def rates(self) -> list[tuple[float, float]]:
        """(baseline, now) agreement of each case; the first is the one that may change."""
        others = self.others or (self.stable,) * (CASES - 1)
        return [(self.before, self.after)] + [(r, r) for r in others]


@dataclass
class Tally:
    runs: int = 0
    failed: int = 0  # the run failed: some case regressed or failed
    caught: int = 0  # the changing case regressed
    wrongly: int = 0  # an unchanged case regressed
    requests: int = 0  # pull-request samples drawn, all cases
    warned: int = 0  # some case of the run warned (an unchanged one, when one case changes)
    missed: int = 0  # the changing case did not regress
    missed_warned: int = 0  # ... and warned

    def line(self, scenario: Scenario) -> str:
        per_case = self.requests / (self.runs * CASES)
        changed = scenario.after != scenario.before
        alarms = self.wrongly if changed else self.failed
        head = f"false alarms {alarms / self.runs:6.1%} ({_interval(alarms, self.runs)})"
        power = f"   power {self.caught / self.runs:6.1%}" if changed else ""
        warned = f"   runs warned {self.warned / self.runs:5.1%}"
        if changed and self.missed:
            warned += f", a missed drop warned {self.missed_warned}/{self.missed}"
        return f"{head}{power}   PR requests per case {per_case:5.1f}{warned}"


def _interval(k: int, n: int) -> str:
    """95% Wilson interval of a share, for reading a false-alarm rate against alpha."""
    z, p = 1.96, k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"95% CI {max(0.0, centre - half):.3f}-{centre + half:.3f}"


def make_cases(design: Design) -> list[ResolvedCase]:
    return [
        ResolvedCase(
            id=f"case-{i}",
            line=i + 1,
            messages=(Message(role="user", content=f"question {i}"),),
            provider=ProviderConfig(type="openai", model="m"),
            thresholds=Thresholds(),
            answer=AnswerSpec(choice=list(LABELS)),
            expected=None,
            samples=design.samples,
            baseline_samples=design.baseline,
            max_samples=design.max_samples,
        )
        for i in range(CASES)
    ]


def answers(rng: np.random.Generator, n: int, agreement: float) -> list[str]:
    rest = (1 - agreement) / (len(LABELS) - 1)
    picks = rng.choice(len(LABELS), size=n, p=[agreement] + [rest] * (len(LABELS) - 1))
    return [LABELS[i] for i in picks]


def samples_of(case_id: str, texts: Sequence[str], start: int, stop: int) -> list[Sample]:
    return [Sample(case=case_id, index=i, text=f"The answer is {texts[i]}.") for i in range(start, stop)]


def measure(cases: Sequence[ResolvedCase], drawn: Sequence[Sample], sizes: Mapping[str, int]) -> list[CaseMeasurement]:
    return measure_cases(cases, drawn, requested=sizes, embedder=None, sampling=None)


def record_baseline(cases: Sequence[ResolvedCase], texts: Mapping[str, Sequence[str]], design: Design) -> Baseline:
    drawn = [s for c in cases for s in samples_of(c.id, texts[c.id], 0, design.baseline)]
    sized = [c.model_copy(update={"samples": design.baseline}) for c in cases]
    return baseline_from_run(sized, measure(sized, drawn, {c.id: design.baseline for c in cases}), "bench")


def pull_request(
    cases: Sequence[ResolvedCase], texts: Mapping[str, Sequence[str]], baseline: Baseline
) -> tuple[list[CaseVerdict], int]:
    """The verdicts of one pull request sampled in stages, and how many samples it drew."""

    def draw(
        some: Sequence[ResolvedCase], start: Mapping[str, int], append: bool
    ) -> tuple[list[Sample], SamplingFacts]:
        drawn = [s for c in some for s in samples_of(c.id, texts[c.id], start.get(c.id, 0), c.samples)]
        return drawn, SamplingFacts(len(drawn), 0, False, False, None, {}, None, None)

    staged = draw_in_stages(cases, baseline, draw, stage_checks(baseline, None, None))
    planned, paths = read_stages(cases, staged.samples, baseline, adaptive=True)
    measured = measure(cases, staged.samples, {**{c.id: c.samples for c in cases}, **planned})
    return judge_cases(cases, measured, baseline, REGRESSION, paths=paths), len(staged.samples)


def simulate(rng: np.random.Generator, design: Design, scenario: Scenario, runs: int) -> Tally:
    cases = make_cases(design)
    tally = Tally()
    most = max(design.baseline, design.max_samples)
    for _ in range(runs):
        rates = scenario.rates()
        before = {c.id: answers(rng, most, r0) for c, (r0, _) in zip(cases, rates, strict=True)}
        now = {c.id: answers(rng, most, r1) for c, (_, r1) in zip(cases, rates, strict=True)}
        verdicts, drawn = pull_request(cases, now, record_baseline(cases, before, design))
        tally.runs += 1
        tally.requests += drawn
        tally.failed += any(v.verdict in ("regressed", "fail") for v in verdicts)
        tally.caught += verdicts[0].verdict == "regressed"
        tally.wrongly += any(v.verdict == "regressed" for v in verdicts[1:])
        changed = scenario.after != scenario.before
        tally.warned += any(v.verdict == "warn" for v in (verdicts[1:] if changed else verdicts))
        missed = changed and verdicts[0].verdict != "regressed"
        tally.missed += missed
        tally.missed_warned += missed and verdicts[0].verdict == "warn"
    return tally


#: Issue 27's warning suite: ten choice cases at these agreements.
WARNING_SUITE = (1.0, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.55, 0.4, 0.85)

SCENARIOS = (
    Scenario("0.95 -> 0.60 (one case of ten)", 0.95, 0.95, 0.60),
    Scenario("0.90 -> 0.70 (one case of ten)", 0.90, 0.90, 0.70),
    Scenario("unchanged at 0.95 (all ten)", 0.95, 0.95, 0.95),
    Scenario("unchanged at 0.90 (all ten)", 0.90, 0.90, 0.90),
    Scenario("the warning suite, unchanged", 0.95, 1.0, 1.0, WARNING_SUITE[1:]),
    Scenario("the warning suite, 0.85 -> 0.70", 0.95, 0.85, 0.70, WARNING_SUITE[:-1]),
)


TABLE_DROPS = ((0.95, 0.85), (0.95, 0.75), (0.95, 0.60), (0.90, 0.70))
TABLE_BASELINES = (20, 50, 100)
TABLE_PULL_REQUESTS = (10, 20, 40)


def print_table(level: float) -> None:
    """A case's exact power, by baseline N x pull-request design x drop (a Markdown table)."""
    drops = [f"{a:.2f} -> {b:.2f}" for a, b in TABLE_DROPS]
    print(f"| baseline N | PR N | {' | '.join(drops)} |")
    print("| --- | --- |" + " --- |" * len(drops))
    designs = [(f"{n}", StageDesign(n, n)) for n in TABLE_PULL_REQUESTS] + [("20 up to 50", StageDesign(20, 50))]
    for n_base in TABLE_BASELINES:
        for name, design in designs:
            cells = [power_over_baselines(n_base, design, a, b, level, REGRESSION.min_drop) for a, b in TABLE_DROPS]
            print(f"| {n_base} | {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--table", action="store_true", help="print the exact power table and exit")
    args = parser.parse_args(argv)
    if args.table:
        print_table(REGRESSION.alpha / CASES)
        return 0
    started = time.perf_counter()
    print(f"{args.runs} simulated runs per line, {CASES} choice cases, alpha {REGRESSION.alpha}, seed {args.seed}")
    for design in DESIGNS:
        print(f"\n{design.name}")
        for number, scenario in enumerate(SCENARIOS):  # each scenario its own stream, the same in every design
            tally = simulate(np.random.default_rng([args.seed, number]), design, scenario, args.runs)
            print(f"  {scenario.name:<34} {tally.line(scenario)}")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
