"""The smoke test's `docker run` is the runner's: the list in runner_container against actions/runner.

Each expectation below is read from actions/runner at RUNNER_SOURCE (file named in the test), so a
change there is a change here, made on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.runner_container import (
    RUNNER_SOURCE,
    ContainerStep,
    GithubContext,
    RunnerLayout,
    input_variables,
)

ROOT = Path(__file__).resolve().parents[2]
ACTION_YML = ROOT / "action.yml"
TOKEN = "ghs_test_token_value"
# GitHubContext.cs: the github context keys the runner exports as GITHUB_<KEY>.
RUNNER_GITHUB_ALLOWLIST = {
    "action_path", "action_ref", "action_repository", "action", "actor", "actor_id", "api_url",
    "artifacts", "artifacts_list", "base_ref", "env", "event_name", "event_path", "graphql_url",
    "head_ref", "job", "output", "path", "ref_name", "ref_protected", "ref_type", "ref",
    "repository", "repository_id", "repository_owner", "repository_owner_id", "retention_days",
    "run_attempt", "run_id", "run_number", "server_url", "sha", "state", "step_summary",
    "triggering_actor", "workflow", "workflow_ref", "workflow_sha", "workspace",
}  # fmt: skip


def _layout(tmp_path: Path) -> RunnerLayout:
    return RunnerLayout(temp=tmp_path / "_work" / "_temp", workspace=tmp_path / "_work" / "widgets" / "widgets")


def _step(tmp_path: Path, **overrides: object) -> ContainerStep:
    fields: dict[str, object] = {
        "image": "gate:test",
        "layout": _layout(tmp_path),
        "step": "abc123",
        "inputs": input_variables(ACTION_YML, {"suite": "s.yml"}, TOKEN),
        "env": {"OPENAI_API_KEY": "sk-secret-value"},
        "github": GithubContext(api_url="http://127.0.0.1:1"),
    }
    fields.update(overrides)
    return ContainerStep(**fields)  # type: ignore[arg-type]


def _options(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, part in enumerate(argv) if part == flag]


def test_every_input_action_yml_declares_reaches_the_container_with_its_default() -> None:
    declared = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["inputs"]
    variables = input_variables(ACTION_YML, {}, TOKEN)
    # Handler.cs AddInputsToEnvironment: INPUT_ + the name upper-cased, spaces as underscores, hyphens kept.
    assert set(variables) == {f"INPUT_{name.upper()}" for name in declared}
    for name, spec in declared.items():
        expected = str(spec.get("default", ""))
        if expected == "${{ github.token }}":
            expected = TOKEN  # evaluated by the runner before the step starts
        assert variables[f"INPUT_{name.upper()}"] == expected, name
    # The inputs a step leaves out still arrive, empty: the Action must treat "" as not given.
    assert variables["INPUT_SHARD"] == "" and variables["INPUT_MERGE"] == ""


def test_a_given_input_replaces_its_default_and_an_undeclared_one_is_refused() -> None:
    assert input_variables(ACTION_YML, {"fail-on": "never"}, TOKEN)["INPUT_FAIL-ON"] == "never"
    with pytest.raises(ValueError, match="not-an-input"):
        input_variables(ACTION_YML, {"not-an-input": "x"}, TOKEN)


def test_argv_is_the_docker_run_of_the_runner(tmp_path: Path) -> None:
    step = _step(tmp_path)
    argv = step.argv(container_name="gate_abc", label="1a2b3c")
    layout = step.layout
    environment = step.environment()
    # DockerCommandManager.DockerRun: name, label, workdir, --rm, one `-e NAME` per variable, the
    # two watermarks, the mounts, the image; no entrypoint (action.yml names none) and no args.
    assert argv[:9] == [
        "docker",
        "run",
        "--name",
        "gate_abc",
        "--label",
        "1a2b3c",
        "--workdir",
        "/github/workspace",
        "--rm",
    ]
    assert _options(argv, "-e") == [*environment, "GITHUB_ACTIONS=true", "CI=true"]
    # ContainerActionHandler: these six, in this order.
    assert _options(argv, "-v") == [
        "/var/run/docker.sock:/var/run/docker.sock",
        f"{layout.temp}:/github/runner_temp",
        f"{layout.temp}/_github_home:/github/home",
        f"{layout.temp}/_github_workflow:/github/workflow",
        f"{layout.temp}/_runner_file_commands:/github/file_commands",
        f"{layout.workspace}:/github/workspace",
    ]
    assert argv[-1] == "gate:test"
    assert "--entrypoint" not in argv and "--add-host" not in argv


def test_values_travel_in_the_environment_of_docker_never_on_its_command_line(tmp_path: Path) -> None:
    step = _step(tmp_path)
    argv = step.argv()
    assert not any("sk-secret-value" in part or TOKEN in part for part in argv)
    process = step.process_environment({"PATH": "/usr/bin"})
    assert process["OPENAI_API_KEY"] == "sk-secret-value"
    assert process["INPUT_GITHUB-TOKEN"] == TOKEN
    assert process["PATH"] == "/usr/bin"


def test_the_job_network_is_passed_only_when_the_job_has_one(tmp_path: Path) -> None:
    # Without `container:` or `services:` there is no --network: the engine's default bridge.
    assert "--network" not in _step(tmp_path).argv()
    # With them, ContainerOperationProvider made github_network_<guid> and every container joins it.
    with_services = _step(tmp_path, network="github_network_0123").argv()
    assert _options(with_services, "--network") == ["github_network_0123"]


def test_paths_are_translated_to_the_container_as_the_runner_does(tmp_path: Path) -> None:
    environment = _step(tmp_path).environment()
    layout = _layout(tmp_path)
    # FileCommandManager.cs prefixes; the file_commands mapping wins over runner_temp (added later).
    assert environment["GITHUB_OUTPUT"] == "/github/file_commands/set_output_abc123"
    assert environment["GITHUB_STEP_SUMMARY"] == "/github/file_commands/step_summary_abc123"
    assert environment["GITHUB_ENV"] == "/github/file_commands/set_env_abc123"
    assert environment["GITHUB_PATH"] == "/github/file_commands/add_path_abc123"
    assert environment["GITHUB_STATE"] == "/github/file_commands/save_state_abc123"
    assert environment["GITHUB_EVENT_PATH"] == "/github/workflow/event.json"
    assert environment["GITHUB_WORKSPACE"] == "/github/workspace"
    assert environment["HOME"] == "/github/home"
    assert environment["RUNNER_TEMP"] == "/github/runner_temp"
    # Paths outside the mounts stay host paths, which the container cannot open.
    assert environment["RUNNER_WORKSPACE"] == str(layout.workspace.parent)
    assert environment["RUNNER_TOOL_CACHE"] == "/opt/hostedtoolcache"


def test_the_contexts_win_over_a_step_env_of_the_same_name(tmp_path: Path) -> None:
    step = _step(tmp_path, env={"GITHUB_WORKSPACE": "/elsewhere", "HOME": "/root", "MY_SETTING": "1"})
    environment = step.environment()
    assert environment["GITHUB_WORKSPACE"] == "/github/workspace"
    assert environment["HOME"] == "/github/home"
    assert environment["MY_SETTING"] == "1"


def test_only_github_variables_the_runner_exports_are_set(tmp_path: Path) -> None:
    names = {name for name in _step(tmp_path).environment() if name.startswith("GITHUB_")}
    assert {name.removeprefix("GITHUB_").lower() for name in names} <= RUNNER_GITHUB_ALLOWLIST
    assert {"GITHUB_API_URL", "GITHUB_EVENT_NAME", "GITHUB_REPOSITORY", "GITHUB_SHA", "GITHUB_REF"} <= names


def test_prepare_creates_what_the_runner_creates_before_a_step(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    (layout.file_commands).mkdir(parents=True)
    (layout.file_commands / "set_output_abc123").write_text("stale=1\n", encoding="utf-8")
    layout.prepare("abc123", {"number": 7})
    assert json.loads(layout.event_path.read_text(encoding="utf-8")) == {"number": 7}
    assert layout.home.is_dir()
    names = sorted(p.name for p in layout.file_commands.iterdir())
    assert names == [
        "add_path_abc123",
        "save_state_abc123",
        "set_env_abc123",
        "set_output_abc123",
        "step_summary_abc123",
    ]
    assert all(p.read_text(encoding="utf-8") == "" for p in layout.file_commands.iterdir())


def test_the_smoke_test_runs_the_container_only_through_this_list() -> None:
    script = (ROOT / "scripts" / "container_smoke_test.sh").read_text(encoding="utf-8")
    assert "-m tests.support.runner_container" in script
    commands = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if "docker run" in line]
    assert RUNNER_SOURCE.startswith("actions/runner@")
