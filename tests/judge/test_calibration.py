"""Calibration: pull requests that change nothing fail at most `alpha` of the time; real flips always fail.

A seeded simulation (issue 17). Each simulated pull request draws a fresh baseline and a fresh run
from the SAME answer distributions (N = 20 each) and judges them through the library's own path
(measure -> judge, `pipeline.evaluate` with the real embedding model), over choice, number, JSON and
free-text cases, two of them answering 60/40 (one parsed, one between two meanings). A false alarm
is a run that exits 1. Free texts are drawn from small fixed paraphrase sets, so every text is
embedded once and the simulation stays fast.

The figures are printed (`pytest -s`) and quoted in docs/design.md §6, "Calibration".
"""

from __future__ import annotations

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
from stabilitygate.pipeline.evaluate import BaselineFile, Judging, evaluate, make_embedder, read_baseline_file
from stabilitygate.report.model import Report
from stabilitygate.samples import Sample

pytestmark = pytest.mark.slow

SEED = 17
N = 20
ALPHA = 0.05  # the suite's default regression.alpha
NULL_PRS = 200
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


def draw(case: SimCase, mix: Mix, rng: random.Random) -> list[Sample]:
    groups = [texts for texts, _ in mix]
    weights = [share for _, share in mix]
    return [Sample(case.id, i, rng.choice(rng.choices(groups, weights)[0])) for i in range(N)]


def draw_run(rng: random.Random, flip: str | None = None) -> list[Sample]:
    """One run's samples; `flip` names the case that answers its `flipped` mix instead."""
    samples = []
    for case in CASES:
        mix = case.flipped if case.id == flip and case.flipped is not None else case.mix
        samples.extend(draw(case, mix, rng))
    return samples


class Gate:
    """The library's judging path over one suite, with one Embedder for every run (texts embed once)."""

    def __init__(self, directory: Path) -> None:
        suite = {
            "version": 1,
            "name": "calibration",
            "provider": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "CAL_KEY"},
            "sampling": {"samples": N},
            "cases": [{"id": c.id, "prompt": c.id, **({"answer": c.answer} if c.answer else {})} for c in CASES],
        }
        path = directory / "suite.yml"
        path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
        self.loaded = load_suite(path)
        self.cases = self.loaded.resolved_cases()
        self.embedder = make_embedder(self.loaded, str(directory / "embeddings"))
        assert self.embedder is not None  # the semantic layer is on
        self.baseline = directory / "suite.baseline.json"

    def judge(self, samples: Sequence[Sample], *, record: bool = False) -> Report:
        judging = Judging(self.baseline, update_baseline=record)
        baseline = BaselineFile(self.baseline, None) if record else read_baseline_file(self.loaded, judging)
        return evaluate(
            self.loaded,
            self.cases,
            samples,
            judging=judging,
            requested={c.id: N for c in self.cases},
            baseline=baseline,
            embedder=self.embedder,
        )

    def pull_request(self, rng: random.Random, flip: str | None = None) -> Report:
        """A fresh baseline recorded, then a run judged against it."""
        self.judge(draw_run(rng), record=True)
        return self.judge(draw_run(rng, flip))


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
        answer_p = mapping.get("answer_p_holm")
        if mapping.get("answer_changed") and answer_p is not None and answer_p < ALPHA:
            rules.append(f"{mapping.get('kind', 'answer')} change")
        for rule in rules or [case["verdict"]]:
            yield case["id"], rule


def warned_cases(report: Report) -> Iterator[str]:
    return (c.id for c in report.cases if c.verdict == "warn")


def lower_bound(failures: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound of a binomial rate."""
    return 0.0 if failures == 0 else float(beta.ppf(1 - confidence, failures, trials - failures + 1))


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    return Gate(tmp_path_factory.mktemp("calibration"))


def test_the_paraphrase_sets_mean_what_the_simulation_assumes(gate: Gate) -> None:
    assert gate.embedder is not None
    for texts in (CAPITAL, TOWER, BOILS, MELTS):
        assert min(similarity(gate.embedder, a, b) for a in texts for b in texts) >= 0.95
    for one, other in ((CAPITAL, TOWER), (BOILS, MELTS)):
        assert max(similarity(gate.embedder, a, b) for a in one for b in other) < 0.6


def test_pull_requests_that_change_nothing_fail_at_most_alpha_of_the_time(gate: Gate) -> None:
    rng = random.Random(SEED)
    alarms, by_rule, warned, warned_runs = 0, Counter[tuple[str, str]](), Counter[str](), 0
    for _ in range(NULL_PRS):
        report = gate.pull_request(rng)
        assert report.exit_code in (0, 1), report.to_dict()["cases"]
        alarms += report.exit_code == 1
        if report.exit_code == 1:
            by_rule.update(failing_rules(report))
        warnings = list(warned_cases(report))
        warned.update(warnings)
        warned_runs += bool(warnings)
    bound = lower_bound(alarms, NULL_PRS)
    rules = ", ".join(f"{rule} on {case}: {n}" for (case, rule), n in sorted(by_rule.items())) or "none"
    print(
        f"\ncalibration (seed {SEED}, N = {N}, alpha = {ALPHA}): {alarms} of {NULL_PRS} unchanged pull requests "
        f"failed ({alarms / NULL_PRS:.3f}; one-sided 95% Clopper-Pearson lower bound {bound:.3f}); "
        f"by rule: {rules}; {warned_runs} runs warned, by case: {dict(sorted(warned.items())) or 'none'}"
    )
    assert bound <= ALPHA


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
