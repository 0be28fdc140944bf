"""A suite spread over a matrix: three `shard` jobs and one `merge` job, each entrypoint.py run as a
process with the runner's environment, against the scripted OpenAI server and the fake GitHub API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.cli import main as cli_main
from stabilitygate.errors import EXIT_BAD_INPUT, EXIT_CANNOT_MEASURE
from stabilitygate.github import action
from tests.github.test_action import API_KEY, PR, TOKEN, Run, Runner, assert_no_secret
from tests.support.github_server import FakeGitHub
from tests.support.openai_server import ScriptedOpenAI

STEADY = "What is 2 + 2? Reply with the number only."
WOBBLY = "Name one primary colour."
CAPITAL = "What is the capital of France? One word."
LETTER = "Pick A or B."
SHARDS = ("1/3", "2/3", "3/3")
# Cases sorted by (-samples, id) and dealt to the least loaded shard: capital (8), letter, steady, wobbly.
SHARD_CASES = {"1/3": {"capital"}, "2/3": {"letter", "wobbly"}, "3/3": {"steady"}}
MARKER = "<!-- stabilitygate:sharded -->"


@pytest.fixture
def model() -> Iterator[ScriptedOpenAI]:
    # Served in a cycle per prompt: the baseline's 8 capital samples say Paris, the next 8 say Lyon
    # (a whole flip of 8 is significant for the answer change's permutation guard; one of 4 is not).
    script = {
        STEADY: [("4", 1)],
        WOBBLY: [("Red", 1), ("Blue", 1)],
        CAPITAL: [("Paris", 8), ("Lyon", 8)],
        LETTER: [("A", 1), ("(A)", 1)],
    }
    with ScriptedOpenAI(script, api_key=API_KEY) as server:
        yield server


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def runner(tmp_path: Path, github: FakeGitHub) -> Runner:
    return Runner(tmp_path, github)


def write_suite(directory: Path, base_url: str) -> dict[str, int]:
    """The suite; returns each case's line."""
    text = f"""version: 1
name: sharded
provider:
  type: openai
  model: scripted-model
  base_url: {base_url}
  api_key_env: E2E_API_KEY
  params: {{temperature: 0}}
sampling: {{samples: 4, concurrency: 2, timeout_s: 10, retries: 1, max_retry_wait_s: 0.1, early_stop: false}}
embedding: {{enabled: false}}
cases:
  - id: steady
    prompt: "{STEADY}"
    answer: {{number: true}}
  - id: wobbly
    prompt: "{WOBBLY}"
    thresholds: {{max_unique: 1}}
  - id: capital
    prompt: "{CAPITAL}"
    samples: 8
    answer: {{text: {{normalize: [strip, lower]}}}}
  - id: letter
    prompt: "{LETTER}"
    answer: {{choice: [A, B]}}
"""
    path = directory / ".stability" / "suite.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    return {case: lines.index(f"  - id: {case}") + 1 for case in ("steady", "wobbly", "capital", "letter")}


def shard_dir(workspace: Path, shard: str) -> Path:
    index, count = shard.split("/")
    return workspace / ".stabilitygate" / f"shard-{index}-of-{count}"


def run_shards(runner: Runner, event: dict[str, str] | None = None, **inputs: str) -> list[Run]:
    runs = [runner.run({"shard": shard, **inputs}, event) for shard in SHARDS]
    for shard, run in zip(SHARDS, runs, strict=True):
        assert run.code == 0, run.log
        assert f"shard {shard}: this job measures its share of the suite only" in run.stdout
        assert "Traceback" not in run.log
        assert_no_secret(run)
    return runs


def upload_like_the_workflow(workspace: Path) -> str:
    """Move each shard's files where download-artifact puts them in the merge job; the merge pattern."""
    for shard in SHARDS:
        source = shard_dir(workspace, shard)
        target = workspace / "shards" / f"llm-stability-shard-{shard[0]}" / source.name
        target.parent.mkdir(parents=True)
        source.rename(target)
    return "shards/**/report.json"


def concatenated_samples(workspace: Path, into: Path) -> Path:
    files = sorted((workspace / "shards").rglob("samples.jsonl"))
    assert len(files) == 3
    into.write_text("".join(f.read_text(encoding="utf-8") for f in files), encoding="utf-8")
    return into


def unsharded_score(workspace: Path, samples: Path, out: Path, *extra: str) -> int:
    """`stabilitygate score` of all the shards' samples at once, from the workspace as the merge job sees it."""
    argv = ["score", str(samples), "--suite", ".stability/suite.yml", "--report-json", str(out / "report.json")]
    return cli_main([*argv, "--markdown", str(out / "report.md"), *extra])


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_three_shards_then_a_merge_gate_and_comment_like_one_run(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = runner.workspace
    lines = write_suite(workspace, model.base_url)
    monkeypatch.chdir(workspace)
    push = runner.event("push", {"ref": "refs/heads/main"})
    baseline_path = workspace / ".stability" / "suite.baseline.json"

    # The baseline, recorded by a sharded run: shards leave it alone, the merge writes all of it.
    recording = run_shards(runner, push, **{"update-baseline": "true"})
    assert all("the merge job records the baseline" in run.stdout for run in recording)
    assert not baseline_path.exists()
    pattern = upload_like_the_workflow(workspace)
    recorded = runner.run({"merge": pattern, "update-baseline": "true"}, push)
    assert recorded.code == 0, recorded.log
    assert set(read_json(baseline_path)["cases"]) == {"steady", "wobbly", "capital", "letter"}
    expected_baseline = tmp_path / "expected.baseline.json"
    samples = concatenated_samples(workspace, tmp_path / "recording.jsonl")
    assert unsharded_score(workspace, samples, tmp_path, "--update-baseline", "--baseline", str(expected_baseline)) == 0
    assert baseline_path.read_bytes() == expected_baseline.read_bytes()
    assert github.requests == []  # a push has no pull request
    (workspace / "shards").rename(tmp_path / "recording-shards")

    # A pull request: capital now says Lyon (regressed), wobbly keeps two colours (fails its threshold).
    shards = run_shards(runner)
    assert github.requests == []  # comment defaults to true, yet a shard never comments
    shard_requests = []
    for shard, run in zip(SHARDS, shards, strict=True):
        folder = shard_dir(workspace, shard)
        report = read_json(folder / "report.json")
        shard_requests.append(report["run"]["sampling"]["requests"])
        assert {c["id"] for c in report["cases"]} == SHARD_CASES[shard]
        assert report["run"]["sampling"]["shard"] == shard
        assert (folder / "samples.jsonl").is_file() and (folder / "junit.xml").is_file()
        assert run.outputs["report-json"] == f".stabilitygate/{folder.name}/report.json"
        assert run.summary.startswith(f"> **Shard {shard}** of the suite")
        assert run.commands("error") == [] and run.commands("warning") == []  # the merge annotates
    assert read_json(shard_dir(workspace, "1/3") / "report.json")["exit_code"] == 1  # yet the job passed
    assert shards[0].outputs["failed-cases"] == "capital"

    pattern = upload_like_the_workflow(workspace)
    merged = runner.run({"merge": pattern}, None)

    assert merged.code == 1, merged.log
    report_path = workspace / ".stabilitygate" / "report.json"
    report = read_json(report_path)
    assert [c["id"] for c in report["cases"]] == ["steady", "wobbly", "capital", "letter"]
    assert {c["id"]: c["verdict"] for c in report["cases"]} == {
        "steady": "pass",
        "wobbly": "fail",
        "capital": "regressed",
        "letter": "pass",
    }
    # Byte for byte what scoring every shard's samples in one go gives, exit code included.
    alone = tmp_path / "alone"
    samples = concatenated_samples(workspace, tmp_path / "pull-request.jsonl")
    assert unsharded_score(workspace, samples, alone) == merged.code == report["exit_code"]
    # The same report, plus the facts of the shards' live sampling (requests, retries, early stops).
    sampling = report["run"].pop("sampling")
    assert report == read_json(alone / "report.json")
    assert sampling["shard"] is None and sampling["requests"] == sum(shard_requests)
    markdown = (workspace / ".stabilitygate" / "report.md").read_text(encoding="utf-8")
    assert markdown == (alone / "report.md").read_text(encoding="utf-8")
    # One comment, the merged report's Markdown; the summary too.
    assert len(github.writes("POST")) == 1 and github.writes("PATCH") == []
    assert [c["body"] for c in github.comments(PR)] == [markdown]
    assert markdown.startswith(MARKER) and merged.summary == markdown
    assert "created the comment on pull request #7" in merged.stdout
    errors = merged.commands("error")
    assert sorted((p["file"], int(p["line"]), p["title"]) for p, _ in errors) == [
        (".stability/suite.yml", lines["wobbly"], "llm-stability-gate%3A case wobbly fail"),
        (".stability/suite.yml", lines["capital"], "llm-stability-gate%3A case capital regressed"),
    ]
    assert merged.outputs == {
        "verdict": "fail",
        "outcome": "fail",
        "report-json": ".stabilitygate/report.json",
        "report-markdown": ".stabilitygate/report.md",
        "failed-cases": "wobbly,capital",
    }
    assert_no_secret(merged)
    assert "Traceback" not in merged.log

    # A shard whose job died: its cases would be missing from a verdict that looks whole.
    two = "\n".join(str(p.relative_to(workspace)) for p in sorted((workspace / "shards").rglob("report.json"))[::2])
    partial = runner.run({"merge": two}, None)
    assert partial.code == EXIT_CANNOT_MEASURE, partial.log
    (props, message), *others = partial.commands("error")
    assert others == [] and "no report of shard 2/3" in message and "cannot merge" in props["title"]
    assert partial.outputs["verdict"] == "error" and partial.outputs["report-json"] == ""
    assert "no report of shard 2/3" in partial.summary and "exit code 3" in partial.summary
    assert len(github.writes("POST")) == 1 and github.writes("PATCH") == []  # the comment is left alone
    assert not report_path.exists()  # no stale report passes for this run's
    assert TOKEN not in runner.all_text() and API_KEY not in runner.all_text()


def test_shard_and_merge_together_are_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SHARD": "1/2", "INPUT_MERGE": "*/report.json"})
    out = capsys.readouterr().out
    assert code == EXIT_BAD_INPUT
    assert out.startswith("::error title=") and len(out.splitlines()) == 1
    assert "`shard` and `merge` exclude each other" in out


def test_a_merge_matching_nothing_is_bad_input_naming_the_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shards").mkdir()
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_MERGE": "shards/**/report.json"})
    out = capsys.readouterr().out
    assert code == EXIT_BAD_INPUT and len(out.splitlines()) == 1
    assert "`shards/**/report.json` matches no file" in out


def test_a_merge_never_takes_its_own_earlier_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    own = tmp_path / ".stabilitygate" / "report.json"
    own.parent.mkdir()
    own.write_text("{}")
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_MERGE": ".stabilitygate/**/report.json"})
    assert code == EXIT_BAD_INPUT and "only this job's own report files" in capsys.readouterr().out
