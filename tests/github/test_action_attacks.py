"""Issue 25's attacks on the Action, each run through entrypoint.py with the runner's variables, a
command provider or a scripted model, and the GitHub-shaped API on loopback."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.github.test_action import PR, TOKEN, Run, Runner
from tests.support.entailment_server import EntailmentServer
from tests.support.github_server import FakeGitHub

RUNTIME_TOKEN = "actions-runtime-token-0123456789abcdef"
GUARD_S = 60  # an upper bound on waiting for an event, never what a test measures

# What a `command` child sees of the runner: the job's token, and every INPUT_* / ACTIONS_* name.
SHOW_RUNNER = (
    "import os, sys\n"
    "index = int(os.environ['STABILITYGATE_SAMPLE_INDEX'])\n"
    "seen = sorted(k for k in os.environ if k.startswith(('INPUT_', 'ACTIONS_')))\n"
    'print(f\'sample {index}: token {os.environ.get("INPUT_GITHUB-TOKEN")} runtime '
    '{os.environ.get("ACTIONS_RUNTIME_TOKEN")} sees {seen}\')\n'
)
# A command that fails once, telling the token on stderr (as a tool's error message might).
FAIL_WITH_TOKEN = (
    "import os, sys\n"
    "if os.environ['STABILITYGATE_SAMPLE_INDEX'] == '0':\n"
    "    sys.exit('auth failed for ' + os.environ.get('LEAKED', ''))\n"
    "print('fine')\n"
)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def runner(tmp_path: Path, github: FakeGitHub) -> Runner:
    return Runner(tmp_path, github)


@pytest.fixture
def judge() -> Iterator[EntailmentServer]:
    with EntailmentServer() as server:
        yield server


def command(script: str, **extra: object) -> dict[str, object]:
    return {"type": "command", "command": [sys.executable, "-c", script], **extra}


def write(runner: Runner, suite: dict[str, object]) -> Path:
    path = runner.workspace / ".stability" / "suite.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def lines_with(run: Run, secret: str) -> list[str]:
    """The log lines that show `secret`, masks aside (the runner hides those itself)."""
    return [line for line in run.log.splitlines() if secret in line and not line.startswith("::add-mask::")]


def token_suite(runner: Runner, judge: EntailmentServer, *cases: dict[str, object]) -> Path:
    return write(
        runner,
        {
            "version": 1,
            "name": "token",
            "provider": command(SHOW_RUNNER),
            "sampling": {"samples": 3, "concurrency": 2, "timeout_s": 30, "retries": 0},
            "embedding": {"enabled": False},
            "equivalence": {"judge": {"type": "openai", "model": "judge", "base_url": judge.base_url}},
            "cases": list(cases),
        },
    )


def assert_nowhere(run: Run, runner: Runner, github: FakeGitHub, judge: EntailmentServer, *secrets: str) -> None:
    everywhere = {
        "workspace and runner files": runner.all_text(),
        "summary": run.summary,
        "outputs": json.dumps(run.outputs),
        "comment": json.dumps(github.comments(PR)),
        "judge requests": json.dumps([r.body for r in judge.requests]),
    }
    for secret in secrets:
        for where, text in everywhere.items():
            assert secret not in text, f"{where} holds {secret}"
        assert lines_with(run, secret) == []


def samples_of(runner: Runner) -> dict[tuple[str, int], dict[str, object]]:
    lines = (runner.workspace / ".stabilitygate" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {(s["case"], s["index"]): s for s in map(json.loads, lines)}


def test_the_jobs_token_never_leaves_the_job(runner: Runner, github: FakeGitHub, judge: EntailmentServer) -> None:
    """Item 1: a command that prints the token, or fails and tells it on stderr; the baseline recorded."""
    echo = (
        "import os\nprint(os.environ['STABILITYGATE_SAMPLE_INDEX'], os.environ.get('INPUT_GITHUB-TOKEN', 'no token'))"
    )
    token_suite(
        runner,
        judge,
        {"id": "echo", "prompt": "what is the token?", "provider": command(echo)},
        {"id": "stderr", "prompt": "fail once", "provider": command(FAIL_WITH_TOKEN)},
    )
    env = {"ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN, "LEAKED": TOKEN}
    run = runner.run({"update-baseline": "true", "samples": "3"}, env=env)
    assert run.code == 0, run.log
    samples = samples_of(runner)
    assert samples[("echo", 0)]["text"] == "0 no token"  # the child was not given it
    assert samples[("stderr", 0)]["error"] == "exit_1: command exited with status 1: auth failed for ***"
    assert judge.judged, "the judge was asked about the differing completions"
    assert len(github.comments(PR)) == 1 and (runner.workspace / ".stability" / "suite.baseline.json").is_file()
    assert_nowhere(run, runner, github, judge, TOKEN, RUNTIME_TOKEN)


def test_command_children_see_the_runners_variables_only_when_the_suite_passes_them(
    runner: Runner, github: FakeGitHub, judge: EntailmentServer
) -> None:
    token_suite(
        runner,
        judge,
        {"id": "withheld", "prompt": "what do you see?"},
        {
            "id": "passed",
            "prompt": "what do you see?",
            "provider": command(SHOW_RUNNER, pass_env=["INPUT_GITHUB-TOKEN"]),
        },
    )
    run = runner.run({"samples": "3"}, env={"ACTIONS_RUNTIME_TOKEN": RUNTIME_TOKEN})
    assert run.code == 0, run.log
    samples = samples_of(runner)
    assert samples[("withheld", 1)]["text"] == "sample 1: token None runtime None sees []"
    # Passed on purpose: the child got the token, and it was redacted before anything stored it.
    assert samples[("passed", 1)]["text"] == "sample 1: token *** runtime None sees ['INPUT_GITHUB-TOKEN']"
    assert_nowhere(run, runner, github, judge, TOKEN, RUNTIME_TOKEN)


# --- item 2: a completion that closes the comment's code fence -------------------------------------

PAYLOAD = (
    "</details>\n\n## ✅ LLM stability: pass\n\n<img src=https://evil.example/pixel.gif>\n\n"
    "cc @org/team, see #1 and [log in again](https://evil.example/login) PWNED"
)


@pytest.mark.parametrize(
    "closer",
    [
        "`" * 255,  # cmark-gfm keeps 255 of a fence's characters: this line closed a longer fence
        "`" * 300,
        "~" * 255 + "\n" + "`" * 255,  # both kinds of fence closed: only <pre> holds it
        "  " + "`" * 400 + "  \n" + "~" * 400,
    ],
    ids=["255-backticks", "300-backticks", "255-of-both", "indented-400-of-both"],
)
def test_no_completion_closes_the_comment_fence_on_the_fork_safe_path(
    runner: Runner, github: FakeGitHub, closer: str
) -> None:
    from tests.github.test_action_comment_from import fork_report, without_note, workflow_run_event
    from tests.report.test_markdown import assert_inert, parse

    artifact = fork_report(runner, github)
    data = json.loads(artifact.read_text(encoding="utf-8"))
    failing = next(c for c in data["cases"] if c["verdict"] != "pass")
    failing["completions"][0]["text"] = f"harmless start\n{closer}\n{PAYLOAD}"
    artifact.write_text(json.dumps(data), encoding="utf-8")
    run = runner.run({"comment-from": str(artifact), "pr-number": str(PR)}, workflow_run_event(runner))
    assert run.code == 1, run.log
    [comment] = github.comments(PR)
    for shown in (comment["body"], run.summary):
        page = assert_inert(without_note(shown))
        assert [tag for tag, _ in page.tags].count("h2") == 1  # the gate's own heading, no forged one
        assert "PWNED" in "".join(page.code) and "PWNED" not in "".join(page.prose)
        assert "pixel.gif" not in str(page.tags)
    assert "PWNED" not in "".join(parse(comment["body"]).prose)


# --- item 3: links committed under .stabilitygate/ -------------------------------------------------


def judged_suite(runner: Runner, judge: EntailmentServer) -> None:
    write(
        runner,
        {
            "version": 1,
            "name": "links",
            "provider": {"type": "openai", "model": "m", "base_url": judge.base_url},
            "sampling": {"samples": 4, "concurrency": 2, "timeout_s": 30, "retries": 0},
            "embedding": {"enabled": False},
            "equivalence": {"judge": {"type": "openai", "model": "judge", "base_url": judge.base_url}},
            "cases": [{"id": "q", "prompt": "Name a colour."}],
        },
    )


@pytest.mark.parametrize("link", ["judgments-file", "entailment-cache", "hard-link"])
def test_links_under_the_output_directory_are_refused_before_anything_is_written(
    runner: Runner, github: FakeGitHub, tmp_path: Path, link: str
) -> None:
    outside = tmp_path / "outside"
    (outside / "cache").mkdir(parents=True)
    precious = outside / "precious.txt"
    precious.write_text("precious\n", encoding="utf-8")
    out = runner.workspace / ".stabilitygate"
    (out / "embeddings").mkdir(parents=True)
    planted = {
        "judgments-file": out / "samples.judgments.jsonl",
        "entailment-cache": out / "embeddings" / "entailment",
        "hard-link": out / "samples.judgments.jsonl",
    }[link]
    if link == "hard-link":
        os.link(precious, planted)
    else:
        planted.symlink_to(precious if link == "judgments-file" else outside / "cache")
    with EntailmentServer({"Name a colour.": [("Red #red", 1), ("Blue #blue", 1)]}) as judge:
        judged_suite(runner, judge)
        run = runner.run({"comment": "false"})
        asked = judge.count
    assert run.code == 2, run.log
    [(_, message)] = run.commands("error")
    assert planted.relative_to(runner.workspace).as_posix() in message and "link" in message
    assert run.outputs["verdict"] == "error" and "exit code 2" in run.summary
    assert asked == 0  # refused before the model was asked anything
    assert precious.read_text(encoding="utf-8") == "precious\n" and list((outside / "cache").iterdir()) == []
