"""Issue 26: a green check means something was measured, against the baseline that was meant.

Through the real command against a scripted OpenAI server on loopback: a parser that never matches
fails its first run and is never recorded; a baseline of another suite is exit 2 naming both names;
the path read, orphaned entries and changed definitions are said in the console and the comment; a
threshold inside the noise is flagged by `plan` and by `--update-baseline`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from stabilitygate.cli import main
from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import ScriptedOpenAI

CONFIG, LETTER = "The config, as JSON.", "A or B?"
TYPO = {"id": "config", "prompt": CONFIG, "answer": {"json": "/labels"}}  # the model writes "label"
FIXED = {**TYPO, "answer": {"json": "/label"}}
PICK = {"id": "letter", "prompt": LETTER, "answer": {"choice": ["A", "B"]}}
SCRIPT = {CONFIG: [('{"label": "spam"}', 1)], LETTER: [("The answer is A.", 1)]}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unescaped(markdown: Path) -> str:
    """The comment's text with Markdown's backslash escapes (`min\\_parsed`) taken out."""
    return re.sub(r"\\(.)", r"\1", markdown.read_text())


def row(markdown: str, case_id: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| {case_id} |"))


def test_the_life_of_a_suite(tmp_path: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str]) -> None:
    comment = tmp_path / "comment.md"
    baseline = tmp_path / "suite.baseline.json"
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, [TYPO, PICK])

        # A typo'd pointer is valid YAML and a valid pointer: validate cannot know the model's keys.
        assert main(["validate", str(suite)]) == 0
        assert "valid (2 cases" in capsys.readouterr().out

        # The first run measures nothing for `config`, and fails on it: min_parsed is on by default.
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(comment))
        assert code == 1 and report is not None and report["verdict"] == "fail"
        config = report["cases"][0]
        assert config["verdict"] == "fail"
        assert config["reasons"][0] == (
            "0/10 answers parsed (0.00), below min_parsed 0.50: check the parser against the completions"
        )
        text = comment.read_text()
        assert row(text, "config").startswith("| config | 1 | 0/10 on /labels | 0/10 |")  # unique, agreement, parsed
        assert row(text, "letter").startswith("| letter | 1 | 10/10 on the choice | 10/10 |")
        err = capsys.readouterr().err
        assert f"stabilitygate: no baseline at {baseline}: every case is new" in err
        assert "config: fail: 0/10 answers parsed" in err

        # Recording it is refused, on one line, and the run fails; the other case is recorded.
        code, report = run_cli("run", str(suite), "--no-progress", "--update-baseline")
        assert code == 1 and report is not None and report["run"]["baseline"]["not_recorded"] == ["config"]
        refusal = [line for line in capsys.readouterr().err.splitlines() if "not recorded" in line]
        assert refusal == [
            "stabilitygate: not recorded in the baseline: config, none of whose 10 answers parsed: "
            "fix the parser, then record it again",
            "stabilitygate: 1 case not recorded: the job fails",  # why the recording exits 1
        ]
        assert set(json.loads(baseline.read_text())["cases"]) == {"letter"}

        # Fixed, recorded, compared: the report, the console and the comment name the baseline read.
        suite = write_suite(tmp_path, server.base_url, [FIXED, PICK])
        assert run_cli("run", str(suite), "--no-progress", "--update-baseline")[0] == 0
        assert set(json.loads(baseline.read_text())["cases"]) == {"config", "letter"}
        capsys.readouterr()
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(comment))
        assert code == 0 and report is not None
        assert report["run"]["baseline"] == {"path": str(baseline), "status": "compared"}
        assert f"stabilitygate: compared with the baseline {baseline}" in capsys.readouterr().err
        assert f"Compared with the baseline {baseline}." in unescaped(comment)

        # Another suite's baseline is exit 2 naming both names; nothing is sampled, nothing written.
        other_dir = tmp_path / "other"
        other_dir.mkdir()
        other = write_suite(other_dir, server.base_url, [PICK], name="other-suite")
        assert main(["run", str(other), "--no-progress", "--update-baseline"]) == 0
        foreign = other_dir / "suite.baseline.json"
        before, requests = digest(foreign), server.count
        capsys.readouterr()
        code, report = run_cli("run", str(suite), "--no-progress", "--baseline", str(foreign))
        assert code == 2 and report is None and server.count == requests and digest(foreign) == before
        err = capsys.readouterr().err
        assert str(foreign) in err and "'other-suite'" in err and "'e2e'" in err
        assert "--accept-baseline-suite" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

        # A renamed case: the old entry is listed in the console and the comment; the new id is new.
        renamed = {**PICK, "id": "pick"}
        suite = write_suite(tmp_path, server.base_url, [FIXED, renamed])
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(comment))
        assert code == 0 and report is not None and report["run"]["baseline"]["orphans"] == ["letter"]
        assert "stabilitygate: 1 baseline entry matches no case: renamed? letter" in capsys.readouterr().err
        assert "1 baseline entry matches no case: renamed? letter." in comment.read_text()

        # A changed definition says so, and what to do.
        edited = {**FIXED, "prompt": CONFIG + " Be brief."}
        server_script_key = CONFIG + " Be brief."
    with ScriptedOpenAI({**SCRIPT, server_script_key: SCRIPT[CONFIG]}) as server:
        suite = write_suite(tmp_path, server.base_url, [edited, PICK])
        code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(comment))
    assert code == 0 and report is not None and report["cases"][0]["verdict"] == "new"
    changed = "definition changed since the baseline: re-record it (1 case: config)"
    assert f"stabilitygate: {changed}" in capsys.readouterr().err
    text = comment.read_text()
    assert changed.capitalize() in text and "definition changed" in row(text, "config")


def test_a_baseline_of_another_name_is_accepted_on_purpose(
    tmp_path: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        old = write_suite(tmp_path, server.base_url, [PICK], name="old-name")
        assert main(["run", str(old), "--no-progress", "--update-baseline"]) == 0
        baseline = tmp_path / "suite.baseline.json"
        recorded = digest(baseline)
        renamed = write_suite(tmp_path, server.base_url, [PICK], name="new-name")  # the same path, renamed
        capsys.readouterr()

        # Recording over it is refused too: it would fold another suite's entries into this one's.
        assert run_cli("run", str(renamed), "--no-progress", "--update-baseline")[0] == 2
        assert digest(baseline) == recorded
        assert main(["plan", str(renamed)]) == 2
        assert "'old-name'" in capsys.readouterr().err

        code, report = run_cli("run", str(renamed), "--no-progress", "--accept-baseline-suite", "old-name")
        assert code == 0 and report is not None and report["cases"][0]["verdict"] == "pass"
        assert report["run"]["baseline"]["recorded_suite"] == "old-name"
        assert "recorded for suite 'old-name'; compared with 'new-name'" in capsys.readouterr().err
        assert main(["plan", str(renamed), "--accept-baseline-suite", "old-name"]) == 0

        # A recording with the name accepted adopts the baseline: it now carries the new name.
        args = ("run", str(renamed), "--no-progress", "--update-baseline", "--accept-baseline-suite", "old-name")
        assert run_cli(*args)[0] == 0
        assert json.loads(baseline.read_text())["suite"] == "new-name"
        assert run_cli("run", str(renamed), "--no-progress")[0] == 0


def test_score_names_the_baseline_it_looked_for(
    tmp_path: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = tmp_path / "samples.jsonl"
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, [PICK])
        assert main(["run", str(suite), "--no-progress", "--samples-out", str(samples)]) == 0
    tuned = tmp_path / "tuned.yml"
    tuned.write_text(suite.read_text())
    capsys.readouterr()
    code, _ = run_cli("score", str(samples), "--suite", str(tuned))
    assert code == 0
    err = capsys.readouterr().err
    assert f"no baseline at {tmp_path / 'tuned.baseline.json'}: every case is new" in err


def test_thresholds_inside_the_noise_are_flagged_by_plan_and_update(
    tmp_path: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    noisy = {**PICK, "thresholds": {"min_agreement": 0.6}}
    comment = tmp_path / "comment.md"
    # 40 of 60 answer A: an unchanged run of 12 fails min_agreement 0.60 more often than alpha.
    with ScriptedOpenAI({LETTER: [("A", 2), ("B", 1)]}) as server:
        suite = write_suite(
            tmp_path, server.base_url, [noisy], sampling={"samples": 12, "baseline_samples": 60, "concurrency": 4}
        )
        code, report = run_cli("run", str(suite), "--no-progress", "--update-baseline", "--markdown", str(comment))
    assert code == 0 and report is not None
    (flagged,) = report["run"]["baseline"]["noisy_thresholds"]
    assert (flagged["case"], flagged["threshold"], flagged["baseline_k"], flagged["baseline_n"]) == (
        "letter",
        "min_agreement",
        40,
        60,
    )
    assert flagged["samples"] == 12 and flagged["holds"] == 0.5
    line = "min_agreement 0.60 against a baseline of 40/60: an unchanged run of 12 fails it 35% of the time"
    assert f"stabilitygate: threshold inside the noise: letter: {line}; 0.50 holds at alpha 0.05" in (
        capsys.readouterr().err
    )
    assert line in unescaped(comment)
    assert main(["plan", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "thresholds inside the noise" in out and f"  letter: {line}; 0.50 holds at alpha 0.05" in out


def test_a_recording_that_refused_a_case_fails_even_with_min_parsed_off(tmp_path: Path, run_cli: RunCli) -> None:
    """`min_parsed: 0` lets the case itself pass, but a baseline of nothing parsed is still refused:
    the run exits 1, and its report says fail, as the exit code does."""
    off = {**TYPO, "thresholds": {"min_parsed": 0}}
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, [off, PICK])
        code, report = run_cli("run", str(suite), "--no-progress", "--update-baseline")
    assert code == 1 and report is not None
    assert report["verdict"] == "fail" and report["run"]["baseline"]["not_recorded"] == ["config"]
    assert {c["id"]: c["verdict"] for c in report["cases"]}["config"] != "fail"  # its own verdict is not
