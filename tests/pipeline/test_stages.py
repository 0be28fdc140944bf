"""The adaptive run end to end against the scripted server: checks, a last stage, and `score` agreeing.

The scripted server serves each prompt's answers in a cycle, so a script spreads its answers over the
cycle (every check sees its share), as a model's do: a script that served all its B's last would be
one whose first samples are unanimous by construction.
"""

from __future__ import annotations

from pathlib import Path

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
# One request at a time: the scripted answers arrive in index order. max_samples: the default (25).
SAMPLING = {"samples": 10, "baseline_samples": 50, "concurrency": 1, "timeout_s": 10}
TWO_IN_TEN = [("A", 4), ("B", 1), ("A", 4), ("B", 1)]  # 8 of every 10 A, one B in every five


def suite(tmp_path: Path, server: ScriptedOpenAI, cases: list[dict[str, object]] = CASES, **sampling: int) -> Path:
    return write_suite(tmp_path, server.base_url, cases, sampling={**SAMPLING, **sampling})


def indices(samples: list[Sample], case: str) -> list[int]:
    return sorted(s.index for s in samples if s.case == case)


def test_a_steady_case_stops_at_the_look_and_a_dropped_one_is_tested_at_the_last_stage(tmp_path: Path) -> None:
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(suite(tmp_path, server), update_baseline=True)
        assert server.count == 2 * 50  # baseline_samples, not samples
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({WOBBLY: TWO_IN_TEN}, default="A") as server:
        report = stabilitygate.run(suite(tmp_path, server), samples_out=samples_file)
        requests = server.count
    drawn = list(read_samples(samples_file))
    assert indices(drawn, "steady") == list(range(5))  # the look: half of samples, unanimous
    assert indices(drawn, "wobbly") == list(range(25))  # every check inconclusive: up to max_samples
    assert requests == report.run.sampling.requests == 30  # type: ignore[union-attr]
    steady, wobbly = report.case("steady"), report.case("wobbly")
    assert isinstance(steady.baseline, Compared) and steady.baseline.stage == "look"
    assert steady.baseline.tested is False and steady.baseline.p_adjusted is None
    assert isinstance(wobbly.baseline, Compared) and wobbly.baseline.stage == "second"
    assert (wobbly.baseline.k, wobbly.baseline.n, wobbly.baseline.family_size) == (20, 25, 1)
    assert wobbly.measurement.samples_requested == 25 and steady.measurement.samples_requested == 5
    assert wobbly.verdict == "regressed", wobbly.reasons  # 20/25 against 50/50
    assert steady.verdict == "pass" and any("stopped early: clearly unchanged" in r for r in steady.reasons)
    # Scoring the samples file judges the run the same way, from the indices alone.
    scored = stabilitygate.score([samples_file], suite=suite(tmp_path, server))
    assert [to_json(c) for c in scored.cases] == [to_json(c) for c in report.cases]


def test_a_case_with_thresholds_has_no_look_and_is_checked_from_samples_on(tmp_path: Path) -> None:
    strict = [{**CASES[1], "thresholds": {"min_agreement": 0.5}}]
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(suite(tmp_path, server, strict), update_baseline=True)
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI(default="A") as server:
        report = stabilitygate.run(suite(tmp_path, server, strict), samples_out=samples_file)
    # Unanimous, yet it draws all of `samples` (thresholds are judged on them), and stops there.
    assert indices(list(read_samples(samples_file)), "wobbly") == list(range(10))
    comparison = report.case("wobbly").baseline
    assert isinstance(comparison, Compared) and comparison.stage == "first"
    assert comparison.stages is not None and comparison.stages.look is None


def test_max_samples_equal_to_samples_is_one_fixed_stage(tmp_path: Path) -> None:
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(suite(tmp_path, server, max_samples=10), update_baseline=True)
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({WOBBLY: TWO_IN_TEN}, default="A") as server:
        report = stabilitygate.run(suite(tmp_path, server, max_samples=10), samples_out=samples_file)
    drawn = list(read_samples(samples_file))
    assert indices(drawn, "steady") == indices(drawn, "wobbly") == list(range(10))  # no look, no checks
    wobbly = report.case("wobbly").baseline
    assert isinstance(wobbly, Compared) and wobbly.stage == "first" and wobbly.tested is True
    assert wobbly.stages is not None and (wobbly.stages.samples, wobbly.stages.max_samples) == (10, 10)


def test_a_compared_case_is_never_stopped_early_and_a_new_one_is(tmp_path: Path) -> None:
    limited = [
        {**CASES[1], "thresholds": {"max_unique": 1}},
        {"id": "fresh", "prompt": STEADY, "thresholds": {"max_unique": 1}},
    ]
    with ScriptedOpenAI(default="A") as server:
        stabilitygate.run(suite(tmp_path, server, limited[:1]), update_baseline=True)
    samples_file = tmp_path / "samples.jsonl"
    with ScriptedOpenAI({WOBBLY: TWO_IN_TEN, STEADY: [("A", 1), ("B", 1)]}, default="A") as server:
        report = stabilitygate.run(suite(tmp_path, server, limited), samples_out=samples_file)
    drawn = list(read_samples(samples_file))
    # The compared case failed max_unique at its fifth sample, yet drew what its design draws (no look:
    # it has a threshold; every check inconclusive); the new case stopped once its threshold had failed.
    assert indices(drawn, "wobbly") == list(range(25))
    assert len(indices(drawn, "fresh")) < 10
    assert report.case("wobbly").verdict == "fail" and report.case("fresh").verdict == "fail"
