"""`stabilitygate plan`: requests (first, expected, most), tokens, the detectable drop and the samples a
drop of min_drop needs, per case, before anything is spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from stabilitygate.cli import main
from stabilitygate.judge.power import detectable_drop, expected_requests, samples_for_power
from stabilitygate.judge.stages import StageDesign
from stabilitygate.pipeline.plan import plan_suite

CASES = [
    {"id": "letter", "prompt": "A or B?", "answer": {"choice": ["A", "B"]}},
    {"id": "free", "prompt": "Say hi."},
]


def write(tmp_path: Path, sampling: dict[str, int]) -> Path:
    suite = tmp_path / "suite.yml"
    suite.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "plan",
                "provider": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                "sampling": sampling,
                "embedding": {"enabled": False},
                "cases": CASES,
            }
        )
    )
    return suite


def record(tmp_path: Path, suite: Path) -> None:
    """A baseline of 80 samples per case, 7 + 3 tokens each, scored from a samples file (no model)."""
    lines = []
    for case, texts in (("letter", ["A"] * 76 + ["B"] * 4), ("free", ["hi"] * 60 + ["hello"] * 20)):
        for i, text in enumerate(texts):
            usage = {"prompt_tokens": 7, "completion_tokens": 3}
            lines.append(json.dumps({"case": case, "index": i, "text": text, "usage": usage}))
    samples = tmp_path / "baseline.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    assert main(["score", str(samples), "--suite", str(suite), "--update-baseline"]) == 0


def test_plan_prints_requests_tokens_the_detectable_drop_and_the_samples_min_drop_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write(tmp_path, {"samples": 20, "max_samples": 40})
    record(tmp_path, suite)
    capsys.readouterr()
    assert main(["plan", str(suite)]) == 0
    out = capsys.readouterr().out
    design, level = StageDesign(20, 40), 0.05 / 2  # two compared cases; baselines of 80: twice max_samples
    expected = expected_requests(76, 80, design, 76 / 80) + expected_requests(60, 80, design, 60 / 80)
    assert f"2 cases, 20 requests first, {expected:.0f} expected when nothing changed, at most 80" in out
    letter = next(line for line in out.splitlines() if line.startswith("letter"))
    assert "10 to 40" in letter and "76/80" in letter
    assert f"{expected_requests(76, 80, design, 76 / 80):.1f}" in letter
    assert f"{10 * expected_requests(76, 80, design, 76 / 80):,.0f}" in letter  # 10 tokens a sample
    # The same figures as the library's exact computations, at alpha over the compared cases.
    drop = detectable_drop(76, 80, design, level, 0.10)
    assert drop is not None and f"{drop:.2f}" in letter
    needed = samples_for_power(76, 80, level, 0.10)
    assert (f"{needed:,}" if needed is not None else "none") in letter.split()[-1]
    assert "*" not in out  # every row has its recorded baseline: no footnote for a mark no row carries


def test_plan_without_a_baseline_assumes_one(tmp_path: Path) -> None:
    plan = plan_suite(write(tmp_path, {"samples": 10}))
    assert [(c.requests, c.most_requests, c.baseline_n, c.assumed) for c in plan.cases] == [(5, 25, 50, True)] * 2
    assert all(5 < c.expected_requests < 10 for c in plan.cases)  # a case at 48/50 stops early
    assert all(c.tokens is None for c in plan.cases)
    assert any("*" in line for line in plan.lines())
    assert plan.lines()[-1].startswith("*: a baseline still to be recorded")


def test_against_a_small_baseline_there_is_one_stage(tmp_path: Path) -> None:
    suite = write(tmp_path, {"samples": 20, "max_samples": 40, "baseline_samples": 40})
    assert [(c.requests, c.most_requests) for c in plan_suite(suite).cases] == [(20, 20)] * 2


def test_plan_of_recording_a_baseline(tmp_path: Path) -> None:
    plan = plan_suite(write(tmp_path, {"samples": 10, "baseline_samples": 30}), update_baseline=True)
    assert [c.requests for c in plan.cases] == [30, 30]
    assert plan_suite(write(tmp_path, {"samples": 10}), update_baseline=True, samples=12).cases[0].requests == 12


def test_plan_of_a_bad_suite_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write(tmp_path, {"samples": 10, "max_samples": 5})
    assert main(["plan", str(suite)]) == 2
    assert "max_samples: 5 is below sampling.samples 10" in capsys.readouterr().err
