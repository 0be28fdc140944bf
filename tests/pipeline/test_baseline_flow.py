"""Issue 4, what it must show 1: baseline, regression with its p-value, noise tolerated, answer flips, edits."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import Fault, ScriptedOpenAI

Q1, Q2 = "Capital of France? Reply with A or B. (A) Paris (B) Lyon", "Is 7 prime? (A) yes (B) no"
CASES = [
    {"id": "capital", "prompt": Q1, "answer": {"choice": ["A", "B"]}},
    {"id": "prime", "prompt": Q2, "answer": {"choice": ["A", "B"]}},
]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_phase(tmp_path: Path, run_cli: RunCli, capital: list[tuple[str, int]], *extra: str, cases=CASES):
    script = {Q1: capital, Q2: [("A", 1)]}
    with ScriptedOpenAI(script) as server:
        suite = write_suite(tmp_path, server.base_url, cases)
        return run_cli("run", str(suite), "--no-progress", *extra)


def verdicts(report: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in report["cases"]}


def test_baseline_then_regression_noise_flip_and_edit(tmp_path: Path, run_cli: RunCli) -> None:
    baseline = tmp_path / "suite.baseline.json"
    code, report = run_phase(tmp_path, run_cli, [("A", 1)], "--update-baseline")
    assert code == 0 and report is not None and baseline.exists()
    assert verdicts(report) == {"capital": "new", "prime": "new"}
    recorded = digest(baseline)

    # 6/10 against 10/10: significant after correction, a drop of 0.4 -> regressed, exit 1. (Against a
    # baseline of 10 the run is one stage: a second needs a baseline of twice max_samples.)
    code, report = run_phase(tmp_path, run_cli, [("A", 6), ("B", 4)])
    assert code == 1 and report is not None and report["verdict"] == "fail"
    assert verdicts(report) == {"capital": "regressed", "prime": "pass"}
    reason = " ".join(report["cases"][0]["reasons"])
    assert "6/10" in reason and "10/10" in reason and "p = 0.043 after correction" in reason
    comparison = report["cases"][0]["baseline"]
    assert comparison["p_value"] == pytest.approx(210 / 4845, abs=1e-6) and comparison["p_adjusted"] < 0.05

    # 9/10 against 10/10 is noise at N=10: it passes.
    code, report = run_phase(tmp_path, run_cli, [("A", 9), ("B", 1)])
    assert code == 0 and report is not None and verdicts(report) == {"capital": "pass", "prime": "pass"}

    # A flipped answer at 10/10 is a regression although agreement did not move.
    code, report = run_phase(tmp_path, run_cli, [("B", 1)])
    assert code == 1 and report is not None and verdicts(report)["capital"] == "regressed"
    assert any("answer" in r and "'B'" in r for r in report["cases"][0]["reasons"])

    # An edited prompt is a new case, not compared; the report says to update the baseline.
    edited = [{**CASES[0], "prompt": Q1 + " Think first."}, CASES[1]]
    script = {Q1 + " Think first.": [("B", 1)], Q2: [("A", 1)]}
    with ScriptedOpenAI(script) as server:
        suite = write_suite(tmp_path, server.base_url, edited)
        code, report = run_cli("run", str(suite), "--no-progress")
    assert code == 0 and report is not None and verdicts(report) == {"capital": "new", "prime": "pass"}
    assert any("--update-baseline" in r for r in report["cases"][0]["reasons"])

    # None of the runs without --update-baseline touched the baseline file.
    assert digest(baseline) == recorded


def test_fail_on_modes(tmp_path: Path, run_cli: RunCli) -> None:
    run_phase(tmp_path, run_cli, [("A", 1)], "--update-baseline")
    assert run_phase(tmp_path, run_cli, [("A", 6), ("B", 4)], "--fail-on", "fail")[0] == 0
    assert run_phase(tmp_path, run_cli, [("A", 6), ("B", 4)], "--fail-on", "never")[0] == 0
    strict = [{**CASES[0], "thresholds": {"min_agreement": 1.0}}, CASES[1]]
    assert run_phase(tmp_path, run_cli, [("A", 9), ("B", 1)], "--fail-on", "fail", cases=strict)[0] == 1
    assert run_phase(tmp_path, run_cli, [("A", 9), ("B", 1)], "--fail-on", "never", cases=strict)[0] == 0


def test_corrupt_baseline_is_exit_2_and_untouched(tmp_path: Path, run_cli: RunCli, capsys) -> None:
    baseline = tmp_path / "suite.baseline.json"
    baseline.write_text('{"schema_version": 1, "cases": {"capital": {"hash": ')
    before = digest(baseline)
    for extra in ((), ("--update-baseline",)):
        code, _ = run_phase(tmp_path, run_cli, [("A", 1)], *extra)
        assert code == 2
        assert digest(baseline) == before
    err = capsys.readouterr().err
    assert str(baseline) in err and "Traceback" not in err


def test_a_partial_run_updates_only_its_own_cases(tmp_path: Path, run_cli: RunCli) -> None:
    import json

    baseline = tmp_path / "suite.baseline.json"
    run_phase(tmp_path, run_cli, [("A", 1)], "--update-baseline")
    before = json.loads(baseline.read_text())["cases"]
    code, _ = run_phase(tmp_path, run_cli, [("B", 1)], "--update-baseline", "--case", "capital")
    after = json.loads(baseline.read_text())["cases"]
    assert code == 0 and set(after) == {"capital", "prime"}
    assert after["prime"] == before["prime"]
    assert after["capital"]["answers"][0]["answer"] == "B" and before["capital"]["answers"][0]["answer"] == "A"


def test_fail_on_warn_fails_run_score_and_merge_on_a_warning(tmp_path: Path, run_cli: RunCli) -> None:
    """README and docs/design.md promise `--fail-on warn`; every command that judges takes it."""
    run_phase(tmp_path, run_cli, [("A", 9), ("B", 1)], "--update-baseline")
    samples = tmp_path / "run.jsonl"
    # 9/10 A, then 5/10: a drop of 0.4 with p = 0.076 after correction: not significant at alpha 0.05,
    # but below twice alpha, the evidence a warning needs (docs/design.md §6).
    code, report = run_phase(tmp_path, run_cli, [("A", 5), ("B", 5)], "--samples-out", str(samples))
    assert code == 0 and report is not None and verdicts(report)["capital"] == "warn"
    suite, shard = str(tmp_path / "suite.yml"), tmp_path / "shard.json"
    with ScriptedOpenAI({Q1: [("A", 5), ("B", 5)], Q2: [("A", 1)]}) as server:
        write_suite(tmp_path, server.base_url, CASES)
        shard_run = ("--shard", "1/1", "--samples-out", str(tmp_path / "shard.jsonl"))
        code, _ = run_cli("run", suite, "--no-progress", "--fail-on", "warn", *shard_run, report=shard)
    assert code == 1
    for argv in (["score", str(samples), "--suite", suite], ["merge", str(shard), "--suite", suite]):
        code, report = run_cli(*argv, "--fail-on", "warn")
        assert code == 1, argv
        assert report is not None and report["run"]["fail_on"] == "warn" and verdicts(report)["capital"] == "warn"
        assert run_cli(*argv)[0] == 0  # the default, regression, reports the warning and passes


def test_recording_a_baseline_reads_as_recording(tmp_path: Path, run_cli: RunCli, capsys) -> None:
    baseline = tmp_path / "suite.baseline.json"
    code, _ = run_phase(tmp_path, run_cli, [("A", 1)], "--update-baseline")
    assert code == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"stabilitygate: baseline written to {baseline}: 2 cases recorded"]  # no "no baseline yet"
    # A partial update that regressed against the entry it replaces: said as such, and exit 0.
    code, report = run_phase(tmp_path, run_cli, [("B", 1)], "--update-baseline", "--case", "capital")
    assert code == 0 and report is not None
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == f"stabilitygate: baseline written to {baseline}: 1 case recorded, 1 kept as it was"
    assert err[1] == "stabilitygate: recorded, not gated (1 case: 1 regressed against the entry it replaces)"
    assert err[2].startswith("  capital: regressed: ")
    assert err[3] == "    e.g. (10 of 10 samples): 'B'"  # what the model said, without opening the Markdown
    assert len(err) == 4
    assert report["run"]["baseline"] == {"path": str(baseline), "status": "updated", "kept": 1, "recorded": 1}


def test_the_verdict_line_counts_in_words(tmp_path: Path, run_cli: RunCli, capsys) -> None:
    with ScriptedOpenAI({Q1: [("A", 1)]}, faults=[Fault("status", status=500, prompt=Q1)]) as server:
        suite = write_suite(tmp_path, server.base_url, CASES[:1], sampling={"samples": 4, "retries": 0})
        code, _ = run_cli("run", str(suite), "--no-progress")
    assert code == 3
    lines = capsys.readouterr().err.strip().splitlines()
    assert "stabilitygate: 1 case, 1 error; could not measure: the job fails (exit 3)" in lines
