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

from tests.github.test_action import NO_REPORT_OUTPUTS, PR, TOKEN, Run, Runner
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


# --- item 8: every exit annotated, summarised, and `verdict=error` in the outputs -----------------


def assert_error_exit(run: Run, code: int, *words: str) -> None:
    assert run.code == code, run.log
    errors = [message for _, message in run.commands("error")]
    assert errors, run.log
    for word in words:
        assert any(word in message for message in errors), errors
    assert run.outputs.get("verdict") == "error", run.outputs
    assert f"exit code {code}" in run.summary or "could not measure: the job fails (exit 3)" in run.summary
    assert_commands_resumed(run)
    assert "Traceback" not in run.log


def assert_commands_resumed(run: Run) -> None:
    """Each `::stop-commands::TOKEN` is followed by its `::TOKEN::` later on the same stream."""
    lines = run.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("::stop-commands::"):
            token = line.removeprefix("::stop-commands::")
            assert f"::{token}::" in lines[i + 1 :], "the log's workflow commands were never resumed"


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("baseline-not-json", ("suite.baseline.json", "not valid JSON")),
        ("baseline-huge-integer", ("suite.baseline.json", "5,000 digits")),
        ("unset-key-variable", ("UNSET_API_KEY", "not set")),
    ],
)
def test_bad_input_the_gate_finds_is_annotated(
    runner: Runner, github: FakeGitHub, problem: str, words: tuple[str, ...]
) -> None:
    from tests.github.test_action import write_suite as openai_suite

    with EntailmentServer() as model:
        path, _ = openai_suite(runner.workspace, model.base_url)
        baseline = path.with_name("suite.baseline.json")
        if problem == "baseline-not-json":
            baseline.write_text("{ this is not JSON", encoding="utf-8")
        elif problem == "baseline-huge-integer":
            baseline.write_text('{"suite": "e2e", "cases": {}, "version": ' + "9" * 5000 + "}", encoding="utf-8")
        else:
            path.write_text(path.read_text(encoding="utf-8").replace("E2E_API_KEY", "UNSET_API_KEY"), encoding="utf-8")
        run = runner.run({})
        asked = model.count
    assert_error_exit(run, 2, *words)
    assert asked == 0 and github.requests == []


@pytest.mark.parametrize(
    ("inputs", "word"),
    [({"samples": "many"}, "samples"), ({"working-directory": "nowhere"}, "working-directory")],
)
def test_bad_input_caught_before_the_gate_still_writes_verdict_error(
    runner: Runner, github: FakeGitHub, inputs: dict[str, str], word: str
) -> None:
    run = runner.run(inputs)
    assert_error_exit(run, 2, word)
    assert run.outputs == NO_REPORT_OUTPUTS


def wait_for(condition: object, what: str) -> None:
    """Poll a condition the test cannot be told about (a file, another process's request)."""
    import time

    assert callable(condition)
    for _ in range(int(GUARD_S / 0.02)):
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"never happened: {what}")


def test_sigterm_while_sampling_ends_with_an_annotation_a_summary_and_verdict_error(
    runner: Runner, github: FakeGitHub, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    hang = f"import pathlib, time\npathlib.Path({str(started)!r}).touch()\ntime.sleep({GUARD_S})\n"
    write(runner, {**SIGTERM_SUITE, "provider": command(hang)})
    job = runner.start({})
    wait_for(started.exists, "the command started")
    job.process.send_signal(signal.SIGTERM)
    assert_error_exit(runner.finish(job, GUARD_S), 3, "samples succeeded")


def test_sigterm_while_the_judge_is_asked_ends_with_an_annotation_a_summary_and_verdict_error(
    runner: Runner, github: FakeGitHub
) -> None:
    asked, release = threading.Event(), threading.Event()

    def hold(premise: str, hypothesis: str) -> str:
        asked.set()
        release.wait(GUARD_S)
        return "entailment"

    try:
        with EntailmentServer({"Name a colour.": [("Red", 1), ("Blue", 1)]}, rule=hold) as judge:
            judged_suite(runner, judge)
            job = runner.start({})
            assert asked.wait(GUARD_S), "the judge was never asked"
            job.process.send_signal(signal.SIGTERM)
            run = runner.finish(job, GUARD_S)
    finally:
        release.set()
    assert_error_exit(run, 3, "interrupted")
    report = json.loads((runner.workspace / ".stabilitygate" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "error" and report["cases"][0]["verdict"] == "error"


def test_sigterm_while_the_comment_is_posted_ends_with_an_annotation_a_summary_and_verdict_error(
    runner: Runner, github: FakeGitHub
) -> None:
    github.hold_creates(2)  # the one POST waits for a second that never comes
    with EntailmentServer({"Name a colour.": [("Red", 1)]}) as model:
        write(runner, {**SIGTERM_SUITE, "provider": {"type": "openai", "model": "m", "base_url": model.base_url}})
        job = runner.start({})
        wait_for(lambda: github.writes("POST"), "the comment was posted")
        job.process.send_signal(signal.SIGTERM)
        run = runner.finish(job, GUARD_S)
    assert_error_exit(run, 3, "interrupted")


SIGTERM_SUITE: dict[str, object] = {
    "version": 1,
    "name": "sigterm",
    "sampling": {"samples": 2, "concurrency": 1, "timeout_s": GUARD_S, "retries": 0},
    "embedding": {"enabled": False},
    "cases": [{"id": "q", "prompt": "Name a colour."}],
}


# --- item 13: a suite name without bound ----------------------------------------------------------


def test_a_report_with_a_huge_suite_name_is_refused_and_nothing_is_posted(runner: Runner, github: FakeGitHub) -> None:
    from tests.github.test_action_comment_from import fork_report, workflow_run_event

    artifact = fork_report(runner, github)
    data = json.loads(artifact.read_text(encoding="utf-8"))
    data["suite"]["name"] = "x" * 5_000_000  # 60 MB took 28 s and posted a comment of marker only
    artifact.write_text(json.dumps(data), encoding="utf-8")
    run = runner.run({"comment-from": str(artifact), "pr-number": str(PR)}, workflow_run_event(runner))
    assert_error_exit(run, 2, "at suite/name", "at most 100 characters")
    assert github.comments(PR) == [] and len(run.commands("error")[0][1]) < 1000
