"""Paths confined to the workspace, and a job summary for every exit, with nothing posted.

The Action runs in-process here with the runner's variables, a pull-request event and the fake
GitHub API on loopback: whatever the inputs, the only things written are the annotation and the
job summary, and GitHub hears nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.github import action
from stabilitygate.github.paths import confined, working_directory
from tests.support.github_client import TOKEN
from tests.support.github_server import FakeGitHub

SUITE = "version: 1\nname: x\nprovider: {type: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
SUITE += "cases: [{id: a, prompt: p}]\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / ".stability").mkdir(parents=True)
    (root / ".stability" / "suite.yml").write_text(SUITE)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "suite.yml").write_text(SUITE)
    return root


@pytest.fixture
def here(workspace: Path) -> Iterator[None]:
    """The Action changes into its working directory; the test's own is restored after."""
    before = os.getcwd()
    yield
    os.chdir(before)


def run_action(workspace: Path, github: FakeGitHub, **inputs: str) -> tuple[int, str]:
    """(exit code, job summary) of the Action with these inputs, in a pull request."""
    event = workspace.parent / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}))
    summary = workspace.parent / "summary.md"
    summary.write_text("")
    environ = {
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/widgets",
        "GITHUB_API_URL": github.api_url,
        "INPUT_GITHUB-TOKEN": TOKEN,
        "OPENAI_API_KEY": "sk-test-0123456789",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    code = action.main(environ)
    return code, summary.read_text()


def assert_refused(
    capsys: pytest.CaptureFixture[str], github: FakeGitHub, code: int, summary: str, *words: str
) -> None:
    out = capsys.readouterr().out
    errors = [line for line in out.splitlines() if line.startswith("::error ")]
    assert code == 2, out
    assert len(errors) == 1 and all(word in errors[0] for word in words), out
    assert "exit code 2 (bad input)" in summary and all(word in summary for word in words), summary
    assert github.requests == []  # nothing posted


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("suite", "../outside/suite.yml"),
        ("baseline", "../outside/suite.baseline.json"),
        ("working-directory", ".."),
        ("comment-from", "../outside/report.json"),
        ("suite", "/etc/hostname"),
    ],
)
def test_an_input_path_outside_the_workspace_is_exit_2_naming_it(
    workspace: Path, here: None, github: FakeGitHub, capsys: pytest.CaptureFixture[str], name: str, value: str
) -> None:
    code, summary = run_action(workspace, github, **{name: value})
    assert_refused(capsys, github, code, summary, f"input `{name}`", "outside the workspace")


@pytest.mark.parametrize("name", ["suite", "baseline", "working-directory", "comment-from"])
def test_a_symlink_out_of_the_workspace_is_followed_and_refused(
    workspace: Path, here: None, github: FakeGitHub, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    outside = workspace.parent / "outside"
    (outside / "report.json").write_text("{}")
    (workspace / "link").symlink_to(
        outside / {"working-directory": ".", "comment-from": "report.json"}.get(name, "suite.yml")
    )
    code, summary = run_action(workspace, github, **{name: "link"})
    assert_refused(capsys, github, code, summary, f"input `{name}`", "resolved:", str(outside))


def test_an_output_directory_linked_out_of_the_workspace_is_refused_and_left_alone(
    workspace: Path, here: None, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = workspace.parent / "outside"
    (outside / "report.json").write_text("someone else's file")
    (workspace / ".stabilitygate").symlink_to(outside)
    code, summary = run_action(workspace, github)
    assert_refused(capsys, github, code, summary, "output", "outside the workspace")
    assert (outside / "report.json").read_text() == "someone else's file"  # not deleted as a stale report


def test_a_merge_pattern_matching_a_link_out_of_the_workspace_is_refused(
    workspace: Path, here: None, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "shards").mkdir()
    (workspace.parent / "outside" / "report.json").write_text("{}")
    (workspace / "shards" / "report.json").symlink_to(workspace.parent / "outside" / "report.json")
    code, summary = run_action(workspace, github, merge="shards/*.json")
    assert_refused(capsys, github, code, summary, "input `merge`", "outside the workspace")


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("samples", "abc", "input `samples`: expected a whole number"),
        ("shard", "3/2", "input `shard`: expected K/N with 1 <= K <= N"),
        ("update-baseline", "yes", "input `update-baseline`: expected true or false"),
        ("pr-number", "7; rm -rf /", "input `pr-number`"),
    ],
)
def test_a_bad_input_writes_the_summary_and_one_annotation_and_posts_nothing(
    workspace: Path,
    here: None,
    github: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
    words: str,
) -> None:
    code, summary = run_action(workspace, github, **{name: value})
    assert_refused(capsys, github, code, summary, words)
    assert summary.startswith("## llm-stability-gate: error")


def test_a_missing_workspace_still_writes_the_summary(
    tmp_path: Path, here: None, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary = run_action(tmp_path / "missing", github)
    assert_refused(capsys, github, code, summary, "GITHUB_WORKSPACE")


def test_paths_inside_the_workspace_resolve_and_others_name_the_input(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert confined(tmp_path, tmp_path / "sub", "../a.yml", named="input `suite`") == tmp_path / "a.yml"
    assert working_directory(tmp_path, "sub") == tmp_path / "sub"
    assert working_directory(tmp_path, None) == tmp_path
    with pytest.raises(BadInput, match=r"^input `suite`: '\.\./\.\./x' \(resolved: '.*'\) is outside the workspace"):
        confined(tmp_path, tmp_path / "sub", "../../x", named="input `suite`")
    with pytest.raises(BadInput, match="input `working-directory`: 'nope' is not a directory in the workspace"):
        working_directory(tmp_path, "nope")


def test_the_output_directory_may_hold_files_and_directories_only(tmp_path: Path) -> None:
    """Issue 25, item 3: no symbolic link, hard link, FIFO or socket under .stabilitygate/."""
    from stabilitygate.github.paths import refuse_links

    out = tmp_path / ".stabilitygate"
    (out / "embeddings" / "model").mkdir(parents=True)
    (out / "report.json").write_text("{}")
    (out / "embeddings" / "model" / "entry").write_bytes(b"x")
    refuse_links(out, tmp_path)  # a directory the gate wrote itself
    refuse_links(tmp_path / "missing", tmp_path)  # none yet
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "file").write_text("precious")
    planted = {
        "a symbolic link": lambda p: p.symlink_to(outside / "file"),
        "a hard link to another file": lambda p: os.link(outside / "file", p),
        "neither a file nor a directory": os.mkfifo,
    }
    for why, plant in planted.items():
        path = out / "embeddings" / "model" / "planted"
        plant(path)
        with pytest.raises(BadInput, match=f"'.stabilitygate/embeddings/model/planted' is {why}"):
            refuse_links(out, tmp_path)
        path.unlink()
    linked = tmp_path / "linked"
    linked.symlink_to(out)
    with pytest.raises(BadInput, match="'linked' is a symbolic link"):
        refuse_links(linked, tmp_path)
    assert (outside / "file").read_text() == "precious"
