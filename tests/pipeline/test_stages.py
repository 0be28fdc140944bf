"""The adaptive run end to end against the scripted server: a look, a second stage, and `score` agreeing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import stabilitygate
from stabilitygate.against_baseline import Compared
from stabilitygate.samples import Sample
from stabilitygate.sampling.samples_file import read_samples
from stabilitygate.typed_json import to_json
from tests.pipeline.conftest import write_suite
from tests.support.openai_server import ScriptedOpenAI

STEADY, WOBBLY = "Steady: say A.", "Wobbly: say A."
CASES = [
    {"id": "steady", "prompt": STEADY, "answer": {"choice": ["A", "B"]}},
    {"id": "wobbly", "prompt": WOBBLY, "answer": {"choice": ["A", "B"]}},
]
# One request at a time: the scripted answers arrive in index order.
SAMPLING = {"samples": 10, "baseline_samples": 50, "max_samples": 20, "concurrency": 1, "timeout_s": 10}


def suite(tmp_path: Path, server: ScriptedOpenAI) -> Path:
    return write_suite(tmp_path, server.base_url, CASES, sampling=SAMPLING)


def indices(samples: list[Sample], case: str) -> list[int]:
    return sorted(s.index for s in samples if s.case == case)


def test_a_unanimous_case_stops_at_the_look_and_an_inconclusive_one_takes_a_second_stage(tmp_path: Path) -> None:
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(suite(tmp_path, server), update_baseline=True)
        assert server.count == 2 * 50  # baseline_samples, not samples
    # Now the wobbly case answers B twice in every ten: 8/10 is inconclusive against 50/50.
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({WOBBLY: [("B", 2), ("A", 8)]}, default="A") as server:
        report = stabilitygate.run(suite(tmp_path, server), samples_out=samples_file)
        requests = server.count
    drawn = list(read_samples(samples_file))
    assert indices(drawn, "steady") == list(range(5))  # the look: half of samples
    assert indices(drawn, "wobbly") == list(range(20))  # the second stage continued the indices
    assert requests == report.run.sampling.requests == 25  # type: ignore[union-attr]
    steady, wobbly = report.case("steady"), report.case("wobbly")
    assert isinstance(steady.baseline, Compared) and steady.baseline.stage == "look"
    assert isinstance(wobbly.baseline, Compared) and wobbly.baseline.stage == "second"
    assert (wobbly.baseline.k, wobbly.baseline.n) == (16, 20)
    assert wobbly.measurement.samples_requested == 20 and steady.measurement.samples_requested == 5
    # 16/20 against 50/50, spent at the second stage's share of the level: caught.
    assert wobbly.verdict == "regressed", wobbly.reasons
    assert steady.verdict == "pass"
    # Scoring the samples file judges the run the same way, from the indices alone.
    scored = stabilitygate.score([samples_file], suite=suite(tmp_path, server))
    assert [to_json(c) for c in scored.cases] == [to_json(c) for c in report.cases]


def test_a_case_with_thresholds_has_no_look_but_may_take_a_second_stage(tmp_path: Path) -> None:
    strict = [{**CASES[1], "thresholds": {"min_agreement": 0.5}}]
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(write_suite(tmp_path, server.base_url, strict, sampling=SAMPLING), update_baseline=True)
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({WOBBLY: [("A", 8), ("B", 2)]}, default="A") as server:
        report = stabilitygate.run(
            write_suite(tmp_path, server.base_url, strict, sampling=SAMPLING), samples_out=samples_file
        )
    # Its first five samples are all A, yet it draws all of `samples` (thresholds are judged on them),
    # and 8/10 against 50/50 is inconclusive: a second stage.
    assert indices(list(read_samples(samples_file)), "wobbly") == list(range(20))
    comparison = report.case("wobbly").baseline
    assert isinstance(comparison, Compared) and comparison.stage == "second"
    assert comparison.stages is not None and comparison.stages.look is None


def test_without_max_samples_nothing_is_judged_before_the_end(tmp_path: Path) -> None:
    from stabilitygate.cases import load_suite
    from stabilitygate.judge.baseline import Baseline
    from stabilitygate.pipeline.stages import inconclusive
    from tests.judge.comparison_cases import entry

    def judge(*_: object) -> list[object]:
        raise AssertionError("a run without a second stage judges once, at the end")

    fixed = {k: v for k, v in SAMPLING.items() if k != "max_samples"}
    with ScriptedOpenAI(default="A") as server:
        cases = load_suite(write_suite(tmp_path, server.base_url, CASES, sampling=fixed)).resolved_cases()
    recorded = entry([("A", 50)], [("A", 50)])
    baseline = Baseline(suite="e2e", cases={c.id: replace(recorded, hash=c.definition_hash) for c in cases})
    adaptive = [c.model_copy(update={"max_samples": 20}) for c in cases]
    with pytest.raises(AssertionError, match="judges once"):  # the same cases with a second stage are judged
        inconclusive(adaptive, [], baseline, judge)

    assert inconclusive(cases, [], baseline, judge) == set()
