"""How often the gate cries wolf, and how often it catches a real drop (issue 4's targets).

Simulates CI runs through `judge_cases` with synthetic measurements: each case's N answers are drawn
independently, a fresh baseline for every simulated run. Targets, defaults (alpha 0.05, min_drop 0.10,
answer-change rule on), 10 cases:

- a stable endpoint (each answer "A" with probability 0.9, else "B") fails at most 5% of runs;
- an endpoint whose agreement dropped to 50% is caught in at least 90% of runs.

Run: .venv/bin/python bench/bench_judging.py [--runs 500] [--seed 20240601]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.against_baseline import Compared
from stabilitygate.judge.baseline import baseline_from_run
from stabilitygate.judge.gate import exit_code
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount, FingerprintCount, Metrics
from stabilitygate.suite.model import (
    AnswerSpec,
    Message,
    ProviderConfig,
    Regression,
    ResolvedCase,
    Thresholds,
)

CASES = 10
LABELS = ("A", "B", "C", "D")


def make_cases(n: int) -> list[ResolvedCase]:
    return [
        ResolvedCase(
            id=f"case-{i}",
            line=i + 1,
            messages=(Message(role="user", content=f"question {i}"),),
            provider=ProviderConfig(type="openai", model="m"),
            thresholds=Thresholds(),
            answer=AnswerSpec(choice=list(LABELS)),
            expected=None,
            samples=n,
        )
        for i in range(CASES)
    ]


def measure(case_id: str, answers: Sequence[str]) -> CaseMeasurement:
    """What the measure stage would report for these answers (completion text = the answer's sentence)."""
    n = len(answers)
    counts = sorted(Counter(answers).items(), key=lambda kv: (-kv[1], kv[0]))
    top = counts[0][1]
    return CaseMeasurement(
        id=case_id,
        samples_requested=n,
        samples_ok=n,
        sample_errors=0,
        metrics=Metrics(
            unique_completions=len(counts),
            mode_share=top / n,
            tar_raw=len(counts) == 1,
            parsed_agreement=top / n,
            tar_parsed=len(counts) == 1,
            parse_failures=0,
        ),
        completions=tuple(CompletionCount(f"The answer is {a}.", c) for a, c in counts),
        answers=tuple(AnswerCount(a, c) for a, c in counts),
        fingerprints=(FingerprintCount("fp_1", n),),
    )


def draw(rng: np.random.Generator, n: int, shares: Sequence[float]) -> list[str]:
    picks = rng.choice(len(shares), size=n, p=np.asarray(shares) / sum(shares))
    return [LABELS[i] for i in picks]


@dataclass
class Tally:
    runs: int = 0
    failed: int = 0  # the gate's exit code was 1
    by_drop: int = 0  # runs with a case regressed by the agreement test
    by_answer: int = 0  # runs with a case regressed by the answer-change rule
    cases_regressed: int = 0
    cases_seen: int = 0

    def share(self, count: int) -> str:
        return f"{count / self.runs:6.1%}"


def simulate(
    rng: np.random.Generator,
    n: int,
    runs: int,
    before: Sequence[float],
    after: Sequence[float],
    dropped_cases: int = CASES,
) -> Tally:
    cases = make_cases(n)
    regression = Regression()
    tally = Tally()
    for _ in range(runs):
        baseline_runs = [measure(c.id, draw(rng, n, before)) for c in cases]
        baseline = baseline_from_run(cases, baseline_runs, "bench")
        current = [measure(c.id, draw(rng, n, after if i < dropped_cases else before)) for i, c in enumerate(cases)]
        verdicts = judge_cases(cases, current, baseline, regression)
        tally.runs += 1
        tally.failed += exit_code(verdicts, "regression", could_not_measure=False) == 1
        tally.by_drop += any(isinstance(v.baseline, Compared) and v.baseline.dropped for v in verdicts)
        tally.by_answer += any(
            v.verdict == "regressed" and isinstance(v.baseline, Compared) and v.baseline.answer_changed
            for v in verdicts
        )
        tally.cases_regressed += sum(v.verdict == "regressed" for v in verdicts[:dropped_cases])
        tally.cases_seen += dropped_cases
    return tally


def report(title: str, tally: Tally, *, show_cases: bool = False) -> None:
    line = (
        f"  {title:<52} runs failed {tally.share(tally.failed)}"
        f"   (agreement test {tally.share(tally.by_drop)}, answer change {tally.share(tally.by_answer)})"
    )
    if show_cases:
        line += f"   cases caught {tally.cases_regressed / tally.cases_seen:6.1%}"
    print(line)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"{args.runs} simulated CI runs per line, {CASES} cases, alpha 0.05, min_drop 0.10, seed {args.seed}")
    print(
        "An answer change counts when each answer was a majority of its run and the baseline's answer is\n"
        "now significantly rarer (a rule of the case's one exact test, corrected over the cases)."
    )
    stable, dropped = (0.9, 0.1), (0.5, 0.5)
    for n in (20, 10):
        print(f"\nN = {n}")
        report("stable 90/10 endpoint (target: at most 5% fail)", simulate(rng, n, args.runs, stable, stable))
        report(
            "agreement dropped to 50%, all cases (target: >= 90%)",
            simulate(rng, n, args.runs, stable, dropped),
            show_cases=True,
        )
        report(
            "agreement dropped to 50%, one case of 10",
            simulate(rng, n, args.runs, stable, dropped, dropped_cases=1),
            show_cases=True,
        )
        report(
            "dropped to 50%, spread over 4 answers, all cases",
            simulate(rng, n, args.runs, stable, (0.5, 0.5 / 3, 0.5 / 3, 0.5 / 3)),
            show_cases=True,
        )
    print("\nDoes the answer-change rule cry wolf? Stable endpoints whose top answer is a narrow majority, N = 20:")
    for split in ((0.7, 0.3), (0.6, 0.4), (0.55, 0.45)):
        label = f"stable {round(split[0] * 100)}/{round(split[1] * 100)} endpoint"
        report(label, simulate(rng, 20, args.runs, split, split))
    print(f"\n({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
