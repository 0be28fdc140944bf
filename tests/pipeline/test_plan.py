"""`stabilitygate plan`: requests, tokens and the detectable drop per case, before anything is spent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from stabilitygate.cli import main
from stabilitygate.judge.discrete import first_level
from stabilitygate.judge.power import detectable_drop
from stabilitygate.judge.stages import StageDesign
from stabilitygate.judge.stats import drop_test
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
    """A baseline of 40 samples per case, 7 + 3 tokens each, scored from a samples file (no model)."""
    lines = []
    for case, texts in (("letter", ["A"] * 38 + ["B"] * 2), ("free", ["hi"] * 30 + ["hello"] * 10)):
        for i, text in enumerate(texts):
            usage = {"prompt_tokens": 7, "completion_tokens": 3}
            lines.append(json.dumps({"case": case, "index": i, "text": text, "usage": usage}))
    samples = tmp_path / "baseline.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    assert main(["score", str(samples), "--suite", str(suite), "--update-baseline"]) == 0


def test_plan_prints_requests_tokens_and_the_detectable_drop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write(tmp_path, {"samples": 20, "max_samples": 40})
    record(tmp_path, suite)
    capsys.readouterr()
    assert main(["plan", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "2 cases, 40 requests (at most 80), about 400 tokens" in out
    letter = next(line for line in out.splitlines() if line.startswith("letter"))
    assert "20 (up to 40)" in letter and "200" in letter and "38/40" in letter
    # The same figure as the library's exact computation, at the family's first-step level:
    # two drop tests and two answer guards, all able to reach alpha.
    p_mins = [drop_test(38, 40, 0, 40).p_value, drop_test(30, 40, 0, 40).p_value, 0.0, 0.0]
    level = first_level(p_mins, 0.05)
    drop = detectable_drop(38, 40, StageDesign(20, 40), level, 0.10)
    assert drop is not None and f"{drop:.2f}" in letter
    assert "*" not in out  # every row has its recorded baseline: no footnote for a mark no row carries


def test_plan_without_a_baseline_assumes_one(tmp_path: Path) -> None:
    plan = plan_suite(write(tmp_path, {"samples": 10}))
    assert [(c.requests, c.most_requests, c.baseline_n, c.assumed) for c in plan.cases] == [(10, 10, 50, True)] * 2
    assert all(c.tokens is None for c in plan.cases)
    assert any("*" in line for line in plan.lines())
    assert plan.lines()[-1].startswith("*: a baseline still to be recorded")


def test_plan_of_recording_a_baseline(tmp_path: Path) -> None:
    plan = plan_suite(write(tmp_path, {"samples": 10, "baseline_samples": 30}), update_baseline=True)
    assert [c.requests for c in plan.cases] == [30, 30]
    assert plan_suite(write(tmp_path, {"samples": 10}), update_baseline=True, samples=12).cases[0].requests == 12


def test_plan_of_a_bad_suite_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write(tmp_path, {"samples": 10, "max_samples": 5})
    assert main(["plan", str(suite)]) == 2
    assert "max_samples: 5 is below sampling.samples 10" in capsys.readouterr().err
