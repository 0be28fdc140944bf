"""Calibration: pull requests that change nothing fail at most `alpha` of the time; real flips always fail.

A seeded simulation (issues 17 and 27). Each simulated pull request draws a fresh baseline and a fresh
run from the SAME answer distributions and judges them through the library's own path (measure ->
judge, `pipeline.evaluate` with the real embedding model), over choice, number, JSON and free-text
cases, two of them answering 60/40 (one parsed, one between two meanings). A false alarm is a run
that exits 1. Free texts are drawn from small fixed paraphrase sets, so every text is embedded once
and the simulation stays fast. Two designs: one stage of N = 20 against a baseline of 20, and the
default (a baseline of 100, samples 20 with checks up to 50, drawn check by check as `run` draws).

The test holds the side that matters: the false-alarm rate's point estimate is at most alpha plus two
standard errors (and, for the one-stage design, alpha is spent: at least 0.02, issue 27's target).
The figures are printed (`pytest -s`) and quoted in docs/design.md §6, "Calibration".
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from scipy.stats import beta

from stabilitygate.cases import load_suite
from stabilitygate.measure.embedder import similarity
from stabilitygate.pipeline.evaluate import (
    BaselineFile,
    Judging,
    evaluate,
    make_embedder,
    read_baseline_file,
    stage_checks,
)
from stabilitygate.pipeline.stages import draw_in_stages
from stabilitygate.report.model import Report, SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase

pytestmark = pytest.mark.slow

SEED = 17
N = 20
ALPHA = 0.05  # the suite's default regression.alpha
NULL_PRS = 400
STAGED_PRS = 100
FLIPPED_PRS = 20  # of each kind

# Paraphrase sets: every pair within a set has cosine >= 0.95 (one meaning at the default bar);
# across the sets a case mixes, cosines stay below 0.6 (different meanings). Checked below.
CAPITAL = (
    "Paris is the capital of France.",
    "The capital of France is Paris.",
    "France's capital is Paris.",
    "Paris is the capital city of France.",
    "The French capital is Paris.",
    "The capital city of France is Paris.",
)
TOWER = (
    "The Eiffel Tower is in Paris.",
    "The Eiffel Tower is located in Paris.",
    "The Eiffel Tower is in Paris, France.",
)
BOILS = (
    "Water boils at 100 degrees Celsius.",
    "Water boils at a temperature of 100 degrees Celsius.",
    "Water will boil at 100 degrees Celsius.",
)
MELTS = ("Ice melts at 0 degrees Celsius.", "Ice melts at zero degrees Celsius.")

Mix = tuple[tuple[tuple[str, ...], float], ...]  # (texts of one answer or meaning, its share)


@dataclass(frozen=True)
class SimCase:
    id: str
    answer: Mapping[str, Any] | None
    mix: Mix  # what both the baseline and an unchanged pull request answer
    flipped: Mix | None = None  # what a pull request that really changed it answers


CASES = (
    SimCase(
        "choice_60_40", {"choice": ["A", "B"]}, ((("The answer is A.", "A"), 0.6), (("The answer is B.", "B"), 0.4))
    ),
    SimCase("choice_steady", {"choice": ["A", "B"]}, ((("The answer is A.", "A.", "A"), 0.9), (("B",), 0.1))),
    SimCase(
        "choice_flip",
        {"choice": ["A", "B"]},
        ((("The answer is A.",), 1.0),),
        flipped=((("The answer is B.",), 1.0),),
    ),
    SimCase("number", {"number": True}, ((("42", "The answer is 42."), 0.75), (("41",), 0.25))),
    SimCase("json", {"json": "/x"}, ((('{"x": 1}', '{"x": 1, "ok": true}'), 0.8), (('{"x": 2}',), 0.2))),
    SimCase("text_one_meaning", None, ((CAPITAL, 1.0),)),
    SimCase("text_majority_wording", None, (((TOWER[0],), 0.65), (TOWER[1:], 0.35))),
    SimCase("text_60_40_meanings", None, ((BOILS, 0.6), (MELTS, 0.4))),
    SimCase("text_flip", None, ((CAPITAL, 1.0),), flipped=((TOWER, 1.0),)),
)


def draw(case: SimCase, mix: Mix, rng: random.Random, n: int = N) -> list[Sample]:
    groups = [texts for texts, _ in mix]
    weights = [share for _, share in mix]
    return [Sample(case.id, i, rng.choice(rng.choices(groups, weights)[0])) for i in range(n)]


def draw_run(rng: random.Random, flip: str | None = None, n: int = N) -> list[Sample]:
    """One run's samples; `flip` names the case that answers its `flipped` mix instead."""
    samples = []
    for case in CASES:
        mix = case.flipped if case.id == flip and case.flipped is not None else case.mix
        samples.extend(draw(case, mix, rng, n))
    return samples


class Gate:
    """The library's judging path over one suite, with one Embedder for every run (texts embed once).

    `baseline`: the samples a baseline draws (N: one stage, since a second needs a baseline of twice
    max_samples; the default, 5 x N: checks up to max_samples, drawn check by check)."""

    def __init__(self, directory: Path, baseline: int = N) -> None:
        suite = {
            "version": 1,
            "name": "calibration",
            "provider": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "CAL_KEY"},
            "sampling": {"samples": N, "baseline_samples": baseline},
            "cases": [{"id": c.id, "prompt": c.id, **({"answer": c.answer} if c.answer else {})} for c in CASES],
        }
        path = directory / "suite.yml"
        path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
        self.loaded = load_suite(path)
        self.cases = self.loaded.resolved_cases()
        self.embedder = make_embedder(self.loaded, str(directory / "embeddings"))
        assert self.embedder is not None  # the semantic layer is on
        self.baseline = directory / "suite.baseline.json"
        self.baseline_n = baseline

    def judge(self, samples: Sequence[Sample], *, record: bool = False) -> Report:
        judging = Judging(self.baseline, update_baseline=record)
        baseline = BaselineFile(self.baseline, None) if record else read_baseline_file(self.loaded, judging)
        n = self.baseline_n if record else N
        cases = [c.model_copy(update={"samples": n}) for c in self.cases] if record else self.cases
        return evaluate(
            self.loaded,
            cases,
            samples,
            judging=judging,
            requested={c.id: n for c in self.cases},
            baseline=baseline,
            embedder=self.embedder,
        )

    def pull_request(self, rng: random.Random, flip: str | None = None) -> Report:
        """A fresh baseline recorded, then a run drawn as `run` draws it (check by check) and judged."""
        self.judge(draw_run(rng, n=self.baseline_n), record=True)
        answers = draw_run(rng, flip, n=max(c.max_samples or 0 for c in self.cases) or int(2.5 * N))
        baseline = read_baseline_file(self.loaded, Judging(self.baseline)).contents

        def drawn(
            some: Sequence[ResolvedCase], start: Mapping[str, int], append: bool
        ) -> tuple[list[Sample], SamplingFacts]:
            got = [s for s in answers for c in some if s.case == c.id and start.get(c.id, 0) <= s.index < c.samples]
            return got, SamplingFacts(len(got), 0, False, False, None, {}, None, None)

        staged = draw_in_stages(self.cases, baseline, drawn, stage_checks(baseline, self.embedder, None))
        return self.judge(staged.samples)


def failing_rules(report: Report) -> Iterator[tuple[str, str]]:
    """(case, rule) for every rule that failed a case, read from the case's `baseline` mapping."""
    for case in report.to_dict()["cases"]:
        if case["verdict"] not in ("regressed", "fail", "error"):
            continue
        mapping = case.get("baseline") or {}
        rules = [
            name
            for key, name in (("dropped", "agreement drop"), ("semantic_drift", "meaning drift"))
            if mapping.get(key)
        ]
        answer_p = mapping.get("answer_p_adjusted")
        if mapping.get("answer_changed") and answer_p is not None and answer_p < ALPHA:
            rules.append(f"{mapping.get('kind', 'answer')} change")
        for rule in rules or [case["verdict"]]:
            yield case["id"], rule


def warned_cases(report: Report) -> Iterator[str]:
    return (c.id for c in report.cases if c.verdict == "warn")


def upper_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a binomial rate."""
    return 1.0 if failures == trials else float(beta.ppf(confidence, failures + 1, trials - failures))


def tolerance(trials: int) -> float:
    """alpha plus two standard errors of a rate estimated from `trials` runs, at alpha."""
    return ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / trials)


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    return Gate(tmp_path_factory.mktemp("calibration"))


@pytest.fixture(scope="module")
def staged_gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    return Gate(tmp_path_factory.mktemp("calibration-staged"), baseline=5 * N)


def test_the_paraphrase_sets_mean_what_the_simulation_assumes(gate: Gate) -> None:
    assert gate.embedder is not None
    for texts in (CAPITAL, TOWER, BOILS, MELTS):
        assert min(similarity(gate.embedder, a, b) for a in texts for b in texts) >= 0.95
    for one, other in ((CAPITAL, TOWER), (BOILS, MELTS)):
        assert max(similarity(gate.embedder, a, b) for a in one for b in other) < 0.6


def null_runs(gate: Gate, runs: int, seed: int) -> tuple[int, Counter[tuple[str, str]], Counter[str], int, float]:
    """(false alarms, failing rules, warned cases, runs warned, PR requests per case) over `runs`."""
    rng = random.Random(seed)
    alarms, by_rule, warned, warned_runs, requests = 0, Counter[tuple[str, str]](), Counter[str](), 0, 0
    for _ in range(runs):
        report = gate.pull_request(rng)
        assert report.exit_code in (0, 1), report.to_dict()["cases"]
        alarms += report.exit_code == 1
        if report.exit_code == 1:
            by_rule.update(failing_rules(report))
        warnings = list(warned_cases(report))
        warned.update(warnings)
        warned_runs += bool(warnings)
        requests += sum(c.measurement.samples_requested for c in report.cases)
    return alarms, by_rule, warned, warned_runs, requests / (runs * len(CASES))


def told(name: str, runs: int, found: tuple[int, Counter[tuple[str, str]], Counter[str], int, float]) -> None:
    alarms, by_rule, warned, warned_runs, per_case = found
    rules = ", ".join(f"{rule} on {case}: {n}" for (case, rule), n in sorted(by_rule.items())) or "none"
    print(
        f"\ncalibration, {name} (seed {SEED}, N = {N}, alpha = {ALPHA}): {alarms} of {runs} unchanged pull "
        f"requests failed ({alarms / runs:.3f}; one-sided 95% Clopper-Pearson upper bound "
        f"{upper_bound(alarms, runs):.3f}); by rule: {rules}; {warned_runs} runs warned, by case: "
        f"{dict(sorted(warned.items())) or 'none'}; {per_case:.1f} requests per case"
    )


def test_pull_requests_that_change_nothing_fail_at_most_alpha_of_the_time_and_spend_it(gate: Gate) -> None:
    found = null_runs(gate, NULL_PRS, SEED)
    told("one stage of 20 against 20", NULL_PRS, found)
    share = found[0] / NULL_PRS
    assert share <= tolerance(NULL_PRS)  # the side that matters
    assert share >= 0.02  # alpha spent (issue 27's target: between 0.02 and alpha)


def test_the_default_design_fails_at_most_alpha_of_unchanged_pull_requests(staged_gate: Gate) -> None:
    found = null_runs(staged_gate, STAGED_PRS, SEED + 2)
    told("the default: baseline 100, samples 20 with checks up to 50", STAGED_PRS, found)
    assert found[0] / STAGED_PRS <= tolerance(STAGED_PRS)
    assert found[4] < N  # checks stop the unchanged cases early: fewer requests than a fixed design


@pytest.mark.parametrize("flip", ["choice_flip", "text_flip"], ids=["stable-answer", "stable-meaning"])
def test_a_flipped_stable_answer_or_meaning_is_always_caught(gate: Gate, flip: str) -> None:
    rng = random.Random(SEED + 1)
    caught, rules = 0, Counter[str]()
    for _ in range(FLIPPED_PRS):
        report = gate.pull_request(rng, flip=flip)
        flipped = [rule for case, rule in failing_rules(report) if case == flip]
        caught += report.exit_code == 1 and bool(flipped)
        rules.update(flipped)
    print(f"\ncalibration: {flip} flipped (baseline all one, PR all another): caught {caught} of {FLIPPED_PRS}")
    print(f"  by rule: {dict(sorted(rules.items()))}")
    assert caught == FLIPPED_PRS
