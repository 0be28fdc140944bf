"""The fork-safe side (`comment-from`), the annotation budget, and the job summary's cache line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from stabilitygate.github import action
from stabilitygate.github.reporting import MAX_CASE_WARNINGS, cache_line
from stabilitygate.report.model import BaselineFacts, EmbeddingFacts, Report, RunFacts
from tests.github.test_action import PR, STEADY, TOKEN, WOBBLY, Runner, write_suite
from tests.report.test_markdown import assert_inert
from tests.support.github_server import FakeGitHub
from tests.support.openai_server import ScriptedOpenAI

MEASURED_RUN = 4242  # the fork-safe run whose artifact the comment is rendered from
HOSTILE = "@octocat look [here](https://evil.example) <img src=x onerror=alert(1)> ::error::owned"


@pytest.fixture
def github() -> FakeGitHub:
    with FakeGitHub(token=TOKEN) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def runner(tmp_path: Path, github: FakeGitHub) -> Runner:
    return Runner(tmp_path, github)


def fork_report(runner: Runner, github: FakeGitHub) -> Path:
    """What a fork's `pull_request` job uploads: a real report, with model text the fork chose."""
    script = {STEADY: [("4", 1)], WOBBLY: [(HOSTILE, 1), ("Blue", 1)]}
    with ScriptedOpenAI(script, api_key="sk-e2e-secret-key-0123456789abcdef") as model:
        write_suite(runner.workspace, model.base_url)
        run = runner.run({"comment": "false"})
    assert run.code == 1, run.log
    assert github.requests == []
    artifact = runner.workspace / "measured" / "report.json"  # where the comment workflow downloads it
    artifact.parent.mkdir()
    artifact.write_bytes((runner.workspace / ".stabilitygate" / "report.json").read_bytes())
    return artifact


def without_note(body: str) -> str:
    """The comment less its provenance note (the one link the gate itself writes), to check the rest is inert."""
    lines = body.splitlines(keepends=True)
    end = lines.index("\n", 1)
    assert all(line.startswith(">") for line in lines[1:end])
    return lines[0] + "".join(lines[end + 1 :])


def workflow_run_event(runner: Runner) -> dict[str, str]:
    payload = {"workflow_run": {"id": MEASURED_RUN, "event": "pull_request", "pull_requests": []}}
    return runner.event("workflow_run", payload)


def test_comment_from_renders_the_report_with_the_gates_own_escaping(runner: Runner, github: FakeGitHub) -> None:
    artifact = fork_report(runner, github)
    run = runner.run({"comment-from": str(artifact), "pr-number": str(PR)}, workflow_run_event(runner))
    assert run.code == 1, run.log  # the exit code the gate decided in the fork's job
    [comment] = github.comments(PR)
    body = comment["body"]
    assert body.startswith("<!-- stabilitygate:e2e -->") and run.summary == body
    # The fork's text is shown inert, as GitHub renders it: in a code fence, no link, no mention, no HTML.
    page = assert_inert(without_note(body))
    assert HOSTILE in "".join(page.code) and "@octocat" not in "".join(page.prose)
    assert run.commands("error") == []  # and nothing ran as a workflow command
    # It says whose figures these are, and links that run, right under the marker.
    note = body.splitlines()[1:4]
    assert note[0] == "> [!NOTE]" and "reported by [its own run](" in note[1]
    assert f"](https://github.com/acme/widgets/actions/runs/{MEASURED_RUN})" in note[1]
    assert "can change them" in note[1]


def test_a_forged_pass_is_posted_as_the_runs_claim(runner: Runner, github: FakeGitHub) -> None:
    artifact = fork_report(runner, github)
    data = json.loads(artifact.read_text())
    data.update(verdict="pass", exit_code=0)
    for case in data["cases"]:
        case.update(verdict="pass", reasons=[])
    artifact.write_text(json.dumps(data))
    run = runner.run({"comment-from": "measured/report.json", "pr-number": str(PR)}, workflow_run_event(runner))
    assert run.code == 0, run.log
    body = github.comments(PR)[0]["body"]
    assert "✅" in body and body.index("not measured here") < body.index("✅")


def test_a_report_the_fork_wrote_by_hand_is_rendered_not_posted(runner: Runner, github: FakeGitHub) -> None:
    artifact = fork_report(runner, github)
    data = json.loads(artifact.read_text())
    data["cases"][0]["reasons"] = ["**bold** and [a link](https://evil.example) @someone"]
    data["suite"]["name"] = "e2e --> <script>alert(1)</script>"
    artifact.write_text(json.dumps(data))
    run = runner.run({"comment-from": str(artifact), "pr-number": str(PR)}, workflow_run_event(runner))
    body = github.comments(PR)[0]["body"]
    assert run.code == 1
    page = assert_inert(without_note(body))
    assert "@someone" not in "".join(page.prose) and "evil.example" not in str(page.tags)
    marker = body.splitlines()[0]
    assert marker.startswith("<!-- stabilitygate:") and marker.count("-->") == 1  # the name cannot close it early


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("# not JSON", "not valid JSON"),
        ('{"schema_version": 1, "suite": {"name": "x"}}', "not a stabilitygate report"),
        ('{"verdict": "pass", "cases": "all good"}', "not a stabilitygate report"),
    ],
)
def test_a_bad_comment_source_is_exit_2_and_posts_nothing(
    runner: Runner, github: FakeGitHub, content: str, words: str
) -> None:
    artifact = runner.workspace / "report.json"
    artifact.write_text(content)
    run = runner.run({"comment-from": str(artifact), "pr-number": str(PR)}, workflow_run_event(runner))
    assert run.code == 2, run.log
    assert github.requests == []
    [(_, message)] = run.commands("error")
    assert words in message and str(artifact) in message
    assert "exit code 2" in run.summary and "Traceback" not in run.log


def test_a_missing_comment_source_and_a_bad_pr_number(runner: Runner, github: FakeGitHub) -> None:
    run = runner.run({"comment-from": "nowhere/report.json", "pr-number": str(PR)}, workflow_run_event(runner))
    assert run.code == 2 and "no such file" in run.commands("error")[0][1]
    run = runner.run({"comment-from": "report.json", "pr-number": "7; rm -rf /"}, workflow_run_event(runner))
    assert run.code == 2 and "pr-number" in run.commands("error")[0][1]
    assert github.requests == []


def test_comment_from_without_a_pull_request_warns_and_keeps_the_code(runner: Runner, github: FakeGitHub) -> None:
    artifact = fork_report(runner, github)
    run = runner.run({"comment-from": str(artifact)}, workflow_run_event(runner))
    assert run.code == 1
    assert any("pr-number" in message for _, message in run.commands("warning"))
    assert github.requests == [] and run.summary.startswith("<!-- stabilitygate:e2e -->")


def test_comment_from_excludes_running_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_COMMENT-FROM": "r.json", "INPUT_SHARD": "1/2"})
    assert code == 2 and "comment-from" in capsys.readouterr().out


def test_case_warnings_leave_one_of_githubs_ten_for_the_comment(
    runner: Runner, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = "".join(f'  - id: c{i}\n    prompt: "p{i}"\n    thresholds: {{max_unique: 1}}\n' for i in range(12))
    with ScriptedOpenAI({f"p{i}": [("a", 1), ("b", 1)] for i in range(12)}) as model:
        suite = runner.workspace / ".stability" / "suite.yml"
        suite.parent.mkdir(parents=True)
        suite.write_text(
            "version: 1\nname: many\nprovider: {type: openai, model: m, base_url: " + model.base_url + "}\n"
            "sampling: {samples: 2, concurrency: 4}\nembedding: {enabled: false}\ncases:\n" + cases
        )
        github.forbid_writes = True  # a fork's read-only token
        run = runner.run({"fail-on": "never"})
    assert run.code == 0, run.log
    warnings = run.commands("warning")
    assert len(warnings) == MAX_CASE_WARNINGS + 1 <= 10  # nine cases, then the comment's own warning
    assert "could not comment" in warnings[-1][1]
    assert any("3 more cases" in m for _, m in run.commands("notice"))


def test_the_job_summary_says_how_many_texts_came_from_the_cache() -> None:
    def report(cached: int | None) -> Report:
        facts = EmbeddingFacts("all-MiniLM-L6-v2", 12, 256, "...", texts_from_cache=cached)
        return replace(Report.from_dict(EMPTY), run=RunFacts(BaselineFacts("b", "compared"), facts, "regression"))

    assert cache_line(report(12)).strip() == (
        "<sub>Embedding cache: 12 of 12 distinct texts came from the cache; no model was loaded.</sub>"
    )
    assert "9 of 12" in cache_line(report(9)) and "3 embedded by the model" in cache_line(report(9))
    assert cache_line(report(None)) == ""
    assert "texts_from_cache" not in json.dumps(report(9).to_dict())  # the report JSON never depends on it


EMPTY = {
    "schema_version": 1,
    "tool": {"name": "llm-stability-gate", "version": "0.1.0"},
    "suite": {"path": "s.yml", "name": "s"},
    "verdict": "pass",
    "exit_code": 0,
    "summary": {k: 0 for k in ("cases", "passed", "failed", "regressed", "new", "errors")},
    "run": {"baseline": {"path": "b", "status": "compared"}, "fail_on": "regression"},
    "cases": [],
}


def test_comment_from_a_version_1_report_posts_what_the_version_2_one_does(runner: Runner, github: FakeGitHub) -> None:
    from tests.report.test_golden_report import GOLDEN
    from tests.test_older_versions import as_version_1

    new = runner.workspace / "new.report.json"
    new.write_bytes((GOLDEN / "now.report.json").read_bytes())
    old = runner.workspace / "old.report.json"
    old.write_text(json.dumps(as_version_1(json.loads(new.read_text()))))
    assert "p_holm" in old.read_text() and "p_holm" not in new.read_text()
    bodies = []
    for report in (new, old):
        run = runner.run({"comment-from": str(report), "pr-number": str(PR)}, workflow_run_event(runner))
        assert run.code == 1, run.log  # the golden run regressed
        [comment] = github.comments(PR)  # one sticky comment, updated
        bodies.append(comment["body"])
    assert bodies[0] == bodies[1] and "after correction" in bodies[0]
