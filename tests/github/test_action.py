"""End to end: entrypoint.py run as a process with the environment the runner gives a container
action, against a scripted OpenAI-compatible server and a fake GitHub API, both on loopback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from stabilitygate.github import action
from tests.support.github_outputs import read_outputs
from tests.support.github_server import FakeGitHub
from tests.support.openai_server import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghs_e2eSecretToken0123456789abcdef"
API_KEY = "sk-e2e-secret-key-0123456789abcdef"
#: The step outputs of a job that stopped before the gate could report.
NO_REPORT_OUTPUTS = {
    "verdict": "error",
    "outcome": "error",
    "report-json": "",
    "report-markdown": "",
    "failed-cases": "",
}
PR = 7
OWNER = (1234, 1234)
STEADY = "What is 2 + 2? Reply with the number only."
WOBBLY = "Name one primary colour."


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr

    def commands(self, name: str) -> list[tuple[dict[str, str], str]]:
        """The workflow commands as the runner reads them: none between ::stop-commands:: and its token."""
        found = []
        paused: str | None = None
        for line in self.stdout.splitlines():
            if paused is not None:
                paused = None if line == f"::{paused}::" else paused
                continue
            if line.startswith("::stop-commands::"):
                paused = line.removeprefix("::stop-commands::")
                continue
            match = re.fullmatch(rf"::{name}(?: ([^:]*))?::(.*)", line)
            if match:
                props = dict(p.split("=", 1) for p in match[1].split(",")) if match[1] else {}
                found.append((props, match[2]))
        return found


@pytest.fixture
def model() -> Iterator[ScriptedOpenAI]:
    script = {STEADY: [("4", 1)], WOBBLY: [("Red", 1), ("Blue", 1)]}
    with ScriptedOpenAI(script, api_key=API_KEY) as server:
        yield server


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def write_suite(directory: Path, base_url: str, *, extra: str = "") -> tuple[Path, int]:
    """The suite, and the line of the case that fails its threshold (unique completions 2 > 1)."""
    text = f"""version: 1
name: e2e
provider:
  type: openai
  model: scripted-model
  base_url: {base_url}
  api_key_env: E2E_API_KEY
  params: {{temperature: 0}}
sampling: {{samples: 4, concurrency: 2, timeout_s: 10, retries: 1, max_retry_wait_s: 0.1}}
embedding: {{enabled: false}}
{extra}cases:
  - id: steady
    prompt: "{STEADY}"
    answer: {{number: true}}
  - id: wobbly
    prompt: "{WOBBLY}"
    thresholds: {{max_unique: 1}}
"""
    path = directory / ".stability" / "suite.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path, text.splitlines().index("  - id: wobbly") + 1


@dataclass
class Started:
    """entrypoint.py running, and the runner's files it writes its outputs and summary to."""

    process: subprocess.Popen[str]
    output: Path
    summary: Path


class Runner:
    """Runs entrypoint.py as the runner runs a Docker action: its env, its workspace, its files."""

    def __init__(self, tmp_path: Path, github: FakeGitHub) -> None:
        self.tmp = tmp_path
        self.github = github
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        self.temp = tmp_path / "runner_temp"
        (self.temp / "_github_workflow").mkdir(parents=True)
        (self.temp / "_runner_file_commands").mkdir()
        (self.temp / "_github_home").mkdir()
        self.count = 0

    def event(self, name: str, payload: dict[str, object]) -> dict[str, str]:
        path = self.temp / "_github_workflow" / "event.json"
        path.write_text(json.dumps(payload), encoding="utf-8")
        return {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path)}

    def run(
        self, inputs: dict[str, str], event: dict[str, str] | None = None, env: dict[str, str] | None = None
    ) -> Run:
        return self.finish(self.start(inputs, event, env))

    def start(
        self, inputs: dict[str, str], event: dict[str, str] | None = None, env: dict[str, str] | None = None
    ) -> Started:
        """entrypoint.py started as the runner starts the container; `finish` waits for it."""
        self.count += 1
        commands = self.temp / "_runner_file_commands"
        output, summary = commands / f"set_output_{self.count}", commands / f"step_summary_{self.count}"
        output.touch()
        summary.touch()
        defaults = {  # what action.yml gives for inputs the workflow leaves out
            "suite": ".stability/suite.yml",
            "baseline": "",
            "samples": "",
            "update-baseline": "false",
            "comment": "true",
            "github-token": TOKEN,
            "fail-on": "regression",
            "working-directory": "",
        }
        variables = {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": str(ROOT),  # the image installs the package; here it is the checkout
            "HOME": str(self.temp / "_github_home"),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": "acme/widgets",
            "GITHUB_API_URL": self.github.api_url,
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(self.temp),
            "E2E_API_KEY": API_KEY,
            **(event or self.event("pull_request", {"number": PR, "pull_request": {"number": PR}})),
            **{f"INPUT_{name.upper()}": value for name, value in {**defaults, **inputs}.items()},
            **(env or {}),
        }
        process = subprocess.Popen(
            [sys.executable, str(ROOT / "entrypoint.py")],
            cwd=self.workspace,
            env=variables,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return Started(process, output, summary)

    @staticmethod
    def finish(started: Started, timeout: float = 120) -> Run:
        stdout, stderr = started.process.communicate(timeout=timeout)
        return Run(
            started.process.returncode,
            stdout,
            stderr,
            read_outputs(started.output),
            started.summary.read_text(encoding="utf-8"),
        )

    def all_text(self) -> str:
        """Everything the runs left in the workspace and the runner's files."""
        parts = []
        for base in (self.workspace, self.temp):
            for path in base.rglob("*"):
                if path.is_file():
                    parts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(parts)


@pytest.fixture
def runner(tmp_path: Path, github: FakeGitHub) -> Runner:
    return Runner(tmp_path, github)


def assert_no_secret(run: Run) -> None:
    for line in run.log.splitlines():
        if TOKEN in line or API_KEY in line:
            assert line.startswith("::add-mask::"), line


def test_pull_request_run_comments_once_then_updates(runner: Runner, github: FakeGitHub, model: ScriptedOpenAI) -> None:
    github.add_comments(PR, [f"review remark {i}" for i in range(150)])
    _, wobbly_line = write_suite(runner.workspace, model.base_url)
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if as_root:  # a workspace that belongs to the runner's user, as on a real runner
        for path in [runner.workspace, *runner.workspace.rglob("*")]:
            os.chown(path, *OWNER)

    first = runner.run({})

    assert first.code == 1, first.log
    assert ("::add-mask::" + TOKEN) in first.stdout and ("::add-mask::" + API_KEY) in first.stdout
    errors = first.commands("error")
    assert [(p.get("file"), p.get("line")) for p, _ in errors] == [(".stability/suite.yml", str(wobbly_line))]
    assert "wobbly" in errors[0][0]["title"]
    assert first.outputs == {
        "verdict": "fail",
        "outcome": "fail",
        "report-json": ".stabilitygate/report.json",
        "report-markdown": ".stabilitygate/report.md",
        "failed-cases": "wobbly",
    }
    report = json.loads((runner.workspace / ".stabilitygate" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "fail" and report["exit_code"] == 1
    assert first.summary.startswith("<!-- stabilitygate:e2e -->")
    assert "created the comment on pull request #7" in first.stdout
    assert len(github.writes("POST")) == 1 and len(github.comments(PR)) == 151

    second = runner.run({})

    assert second.code == 1, second.log
    assert "updated the comment on pull request #7" in second.stdout
    assert len(github.writes("POST")) == 1 and len(github.writes("PATCH")) == 1
    ours = [c for c in github.comments(PR) if c["body"].startswith("<!-- stabilitygate:e2e -->")]
    assert len(github.comments(PR)) == 151 and len(ours) == 1
    assert {r.authorization for r in github.requests} == {f"Bearer {TOKEN}"}
    for run in (first, second):
        assert_no_secret(run)
        assert "Traceback" not in run.log
    assert TOKEN not in runner.all_text() and API_KEY not in runner.all_text()
    if as_root:
        wrong = [p for p in runner.workspace.rglob("*") if (p.lstat().st_uid, p.lstat().st_gid) != OWNER]
        assert wrong == []


def test_forbidden_comment_warns_and_keeps_the_gates_exit_code(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    github.forbid_writes = True
    write_suite(runner.workspace, model.base_url)
    run = runner.run({})
    assert run.code == 1, run.log
    warnings = [message for _, message in run.commands("warning")]
    assert len(warnings) == 1
    assert "403" in warnings[0] and "fork" in warnings[0] and "read-only" in warnings[0]
    assert "stability-fork-safe.yml" in warnings[0]
    assert run.summary.startswith("<!-- stabilitygate:e2e -->")
    assert run.outputs["verdict"] == "fail"
    assert github.comments(PR) == []
    assert_no_secret(run)


def test_gate_passing_with_a_forbidden_comment_still_passes(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    github.forbid_writes = True
    write_suite(runner.workspace, model.base_url)
    run = runner.run({"fail-on": "never"})
    assert run.code == 0, run.log
    assert run.outputs["verdict"] == "fail" and run.outputs["failed-cases"] == "wobbly"
    # Not gated: the failing case is a warning, beside the one about the comment.
    assert [p.get("line") is not None for p, _ in run.commands("warning")].count(True) == 1
    assert run.commands("error") == []


def test_bad_suite_is_annotated_at_its_line_and_exits_2(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    write_suite(runner.workspace, model.base_url, extra="sampler: {samples: 3}\n")
    text = (runner.workspace / ".stability" / "suite.yml").read_text(encoding="utf-8")
    bad_line = text.splitlines().index("sampler: {samples: 3}") + 1
    run = runner.run({})
    assert run.code == 2, run.log
    errors = run.commands("error")
    assert errors and errors[0][0]["file"] == ".stability/suite.yml" and errors[0][0]["line"] == str(bad_line)
    assert "sampler" in errors[0][1]
    assert run.outputs == NO_REPORT_OUTPUTS
    assert "exit code 2" in run.summary and "sampler" in run.summary
    assert github.requests == [] and model.count == 0
    assert "Traceback" not in run.log


def test_missing_api_key_is_bad_input_and_no_secret_leaks(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    path, _ = write_suite(runner.workspace, model.base_url)
    path.write_text(path.read_text(encoding="utf-8").replace("E2E_API_KEY", "UNSET_API_KEY"), encoding="utf-8")
    run = runner.run({})
    assert run.code == 2, run.log
    assert "UNSET_API_KEY" in run.summary
    assert run.outputs["verdict"] == "error"
    assert_no_secret(run)


def test_working_directory_and_baseline_update(runner: Runner, github: FakeGitHub, model: ScriptedOpenAI) -> None:
    service = runner.workspace / "service"
    service.mkdir()
    _, wobbly_line = write_suite(service, model.base_url)
    push = runner.event("push", {"ref": "refs/heads/main"})
    run = runner.run({"working-directory": "service", "update-baseline": "true"}, push)
    assert run.code == 0, run.log
    baseline = yaml.safe_load((service / ".stability" / "suite.baseline.json").read_text(encoding="utf-8"))
    assert baseline  # recorded
    # Annotations name the file from the repository root; the gate passed, so they are warnings.
    warnings = run.commands("warning")
    assert [(p.get("file"), p.get("line")) for p, _ in warnings] == [("service/.stability/suite.yml", str(wobbly_line))]
    assert run.outputs["report-json"] == ".stabilitygate/report.json"
    assert (runner.workspace / ".stabilitygate" / "report.json").is_file()
    assert github.requests == []  # a push has no pull request to comment on


def test_the_summary_and_the_comment_name_the_baseline_and_what_fits_no_case(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    path, _ = write_suite(runner.workspace, model.base_url)
    assert runner.run({"update-baseline": "true"}, runner.event("push", {"ref": "refs/heads/main"})).code == 0
    path.write_text(path.read_text(encoding="utf-8").replace("id: wobbly", "id: colour"), encoding="utf-8")

    run = runner.run({})

    assert run.code == 1, run.log  # the renamed case is new, and fails its threshold as before
    (comment,) = [c["body"] for c in github.comments(PR)]
    for shown in (run.summary, comment):
        assert "Compared with the baseline .stability/suite.baseline.json." in shown
        assert "1 baseline entry matches no case: renamed? wobbly." in shown
        assert "| steady | 1 | 4/4 on the number | 4/4 |" in shown  # unique, agreement, parsed
    assert "stabilitygate: 1 baseline entry matches no case: renamed? wobbly" in run.stdout

    # The suite renamed too: its baseline is now another suite's, exit 2 until accepted on purpose.
    path.write_text(path.read_text(encoding="utf-8").replace("name: e2e", "name: e2e-two"), encoding="utf-8")
    refused = runner.run({})
    assert refused.code == 2, refused.log
    assert "recorded for suite 'e2e', and this suite is 'e2e-two'" in refused.summary
    accepted = runner.run({"accept-baseline-suite": "e2e"})
    assert accepted.code == 1, accepted.log
    assert "recorded for suite 'e2e'; compared with 'e2e-two'" in accepted.summary
    assert "Traceback" not in refused.log + accepted.log


def test_comment_false_sends_nothing_to_github(runner: Runner, github: FakeGitHub, model: ScriptedOpenAI) -> None:
    write_suite(runner.workspace, model.base_url)
    run = runner.run({"comment": "false", "samples": "3"})
    assert run.code == 1, run.log
    assert github.requests == []
    report = json.loads((runner.workspace / ".stabilitygate" / "report.json").read_text(encoding="utf-8"))
    assert {c["samples_requested"] for c in report["cases"]} == {3}


@pytest.mark.parametrize(
    ("name", "value", "named"),
    [("samples", "many", "samples"), ("update-baseline", "yes", "update-baseline"), ("fail-on", "x", "fail-on")],
)
def test_bad_inputs_exit_2_with_one_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, value: str, named: str
) -> None:
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), f"INPUT_{name.upper()}": value})
    out = capsys.readouterr().out
    assert code == 2
    assert out.startswith("::error title=") and named in out and len(out.splitlines()) == 1


def test_working_directory_must_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_WORKING-DIRECTORY": "nope"})
    assert code == 2 and "working-directory" in capsys.readouterr().out


def test_missing_workspace_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = action.main({"GITHUB_WORKSPACE": str(tmp_path / "missing")})
    assert code == 2 and "GITHUB_WORKSPACE" in capsys.readouterr().out


def test_entrypoint_turns_a_crash_into_one_error_line(tmp_path: Path) -> None:
    broken = tmp_path / "shadow" / "stabilitygate"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('broken install:\\nsecond line')\n")
    # Run a copy, so that the checkout beside the real entrypoint.py does not win the import.
    shutil.copy(ROOT / "entrypoint.py", tmp_path / "entrypoint.py")
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(broken.parent), "GITHUB_WORKSPACE": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(tmp_path / "entrypoint.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout == (
        "::error title=llm-stability-gate::internal error: RuntimeError: broken install:%0Asecond line "
        "(STABILITYGATE_DEBUG=1 shows the traceback)\n"
    )


def test_variants_input_measures_variants_into_the_comment_and_summary_never_the_verdict(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    extra = f'variants:\n  terse:\n    prompt: "{STEADY} Digits only."\n'
    write_suite(runner.workspace, model.base_url, extra=extra)
    plain = runner.run({"comment": "false"})
    measured = runner.run({"variants": "true"})
    assert plain.code == measured.code == 1, measured.log  # wobbly fails its threshold either way
    assert measured.outputs["failed-cases"] == plain.outputs["failed-cases"] == "wobbly"
    report = json.loads((runner.workspace / ".stabilitygate" / "report.json").read_text(encoding="utf-8"))
    assert [[v["name"] for v in c["variants"]] for c in report["cases"]] == [["terse"], ["terse"]]
    assert "🧪 Variants: 2 measured beside 2 cases" in measured.summary and "🧪 Variants" not in plain.summary
    (comment,) = [c for c in github.comments(PR) if c["body"].startswith("<!-- stabilitygate:e2e -->")]
    assert "| steady | as written |" in comment["body"] and "terse (prompt)" in comment["body"]
    assert_no_secret(measured)


def test_a_variants_own_key_is_masked_and_its_refusal_is_only_the_variants_error(
    runner: Runner, github: FakeGitHub, model: ScriptedOpenAI
) -> None:
    extra = "variants:\n  gateway:\n    provider: {api_key_env: OTHER_GATEWAY}\n"
    write_suite(runner.workspace, model.base_url, extra=extra)
    key = "gw-0123456789-not-a-credential-name"
    push = {**runner.event("push", {"ref": "refs/heads/main"}), "OTHER_GATEWAY": key}
    run = runner.run({"variants": "true"}, push)
    assert run.code == 1, run.log  # wobbly's threshold, as without the variant
    assert f"::add-mask::{key}" in run.stdout
    assert all(line.startswith("::add-mask::") for line in run.log.splitlines() if key in line)
    report = json.loads((runner.workspace / ".stabilitygate" / "report.json").read_text(encoding="utf-8"))
    (gateway,) = report["cases"][0]["variants"]
    assert "401" in gateway["error"] and key not in json.dumps(report)


def test_outside_a_runner_only_secrets_are_masked(runner: Runner, model: ScriptedOpenAI) -> None:
    """Run from a shell (docs/action.md, "Running the entrypoint without Docker"), the environment has the
    shell's PWD and OLDPWD: named like a password, they hold paths, and a mask of the workspace's path
    would hide it in every line of the log."""
    write_suite(runner.workspace, model.base_url)
    shell = {"PWD": str(runner.workspace), "OLDPWD": str(runner.tmp)}
    run = runner.run({"comment": "false"}, env=shell)
    assert run.code == 1, run.log  # wobbly's threshold, as in the other runs
    masked = {line.removeprefix("::add-mask::") for line in run.log.splitlines() if line.startswith("::add-mask::")}
    assert masked == {TOKEN, API_KEY}
