"""How the GitHub runner runs a Docker container action: one list of flags, env and mounts.

`scripts/container_smoke_test.sh` runs the Action's image through this module, and
`tests/support/test_runner_container.py` checks the list against what actions/runner does, so the
smoke test cannot drift from the runner. Read from actions/runner at RUNNER_SOURCE:

- `src/Runner.Worker/Handlers/ContainerActionHandler.cs`: every declared input becomes
  `INPUT_<NAME>` (its default when the step gives none), `HOME` is `_github_home`, the six mounts
  below, the working directory `/github/workspace`, the `github` and `runner` contexts exported as
  `GITHUB_*`/`RUNNER_*`, then every value translated to its container path;
- `src/Runner.Worker/Container/DockerCommandManager.cs` (`DockerRun`): `--name`, `--label`,
  `--workdir`, `--rm`, `-e NAME` per variable (the value travels in the docker CLI's environment,
  never on its command line), `-e GITHUB_ACTIONS=true`, `-e CI=true`, `--network` only when the job
  has one (a job with `container:` or `services:`), the `-v` mounts, the image;
- `src/Runner.Worker/FileCommandManager.cs`: the file commands' names (`set_output_<guid>`, ...);
- `src/Runner.Worker/Container/ContainerInfo.cs`: path translation, the mapping added last first.

No `--add-host`: a container on the default bridge reaches the host only at the bridge's gateway
(e.g. 172.17.0.1); `host.docker.internal` does not resolve on a Linux runner.

Command line (what the smoke test calls)::

    python -m tests.support.runner_container [--network NAME] --image IMAGE --temp DIR \
        --workspace DIR --step NAME [--input NAME=VALUE ...] [--env NAME=VALUE ...] ...

It prints the `docker run` command line as the runner logs it (names, no values), runs it with
the values in the docker CLI's environment, copies the container's output to stdout and `--log`,
and exits with the container's exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

RUNNER_SOURCE = "actions/runner@258d6c857db3519913f7deb6004b60172f8043ae"

CONTAINER_WORKSPACE = "/github/workspace"
CONTAINER_TEMP = "/github/runner_temp"
CONTAINER_HOME = "/github/home"
CONTAINER_WORKFLOW = "/github/workflow"
CONTAINER_FILE_COMMANDS = "/github/file_commands"
DOCKER_SOCKET = "/var/run/docker.sock"

# FileCommandManager.cs: the variable, and the prefix of its file in _runner_file_commands.
FILE_COMMANDS: Mapping[str, str] = {
    "GITHUB_PATH": "add_path_",
    "GITHUB_ENV": "set_env_",
    "GITHUB_STEP_SUMMARY": "step_summary_",
    "GITHUB_STATE": "save_state_",
    "GITHUB_OUTPUT": "set_output_",
}
# An input default the runner evaluates before the step starts (the only expression action.yml uses).
TOKEN_EXPRESSION = re.compile(r"^\$\{\{\s*github\.token\s*\}\}$")


@dataclass(frozen=True)
class RunnerLayout:
    """The runner's directories on the host: its temp directory and the job's workspace."""

    temp: Path  # RUNNER_TEMP on the host (_work/_temp on a hosted runner)
    workspace: Path  # GITHUB_WORKSPACE on the host

    @property
    def home(self) -> Path:
        return self.temp / "_github_home"

    @property
    def workflow(self) -> Path:
        return self.temp / "_github_workflow"

    @property
    def file_commands(self) -> Path:
        return self.temp / "_runner_file_commands"

    @property
    def event_path(self) -> Path:
        return self.workflow / "event.json"

    def file_command(self, variable: str, step: str) -> Path:
        return self.file_commands / f"{FILE_COMMANDS[variable]}{step}"

    def mounts(self) -> tuple[tuple[str, str], ...]:
        """Host path and container path of each `-v`, in the order the runner adds them."""
        return (
            (DOCKER_SOCKET, DOCKER_SOCKET),
            (str(self.temp), CONTAINER_TEMP),
            (str(self.home), CONTAINER_HOME),
            (str(self.workflow), CONTAINER_WORKFLOW),
            (str(self.file_commands), CONTAINER_FILE_COMMANDS),
            (str(self.workspace), CONTAINER_WORKSPACE),
        )

    def to_container_path(self, value: str) -> str:
        """What the runner's path translation makes of a variable's value (ContainerInfo.cs).

        The mapping added last is tried first, so a file command under the temp directory becomes
        /github/file_commands/..., not /github/runner_temp/_runner_file_commands/...
        """
        for host, container in reversed(self.mounts()[1:]):
            if value == host:
                return container
            if value.startswith(host + "/"):
                return container + value[len(host) :]
        return value

    def prepare(self, step: str, event: Mapping[str, Any]) -> None:
        """Create what the runner creates before a step: its directories, event and empty file commands."""
        for directory in (self.home, self.workflow, self.file_commands):
            directory.mkdir(parents=True, exist_ok=True)
        self.event_path.write_text(json.dumps(event), encoding="utf-8")
        for variable in FILE_COMMANDS:
            self.file_command(variable, step).write_text("", encoding="utf-8")


@dataclass(frozen=True)
class GithubContext:
    """The `github` context values of a job that the runner exports as GITHUB_* (GitHubContext.cs)."""

    event_name: str = "pull_request"
    repository: str = "acme/widgets"
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    sha: str = "0" * 40
    ref: str = "refs/pull/7/merge"
    actor: str = "octocat"
    workflow: str = "smoke"
    job: str = "stability"
    run_id: str = "1"

    def variables(self, layout: RunnerLayout, step: str) -> dict[str, str]:
        """GITHUB_* as the runner sets them for a step, host paths still untranslated."""
        owner = self.repository.split("/", 1)[0]
        values = {
            "GITHUB_ACTION": step,
            "GITHUB_ACTION_REF": "",
            "GITHUB_ACTION_REPOSITORY": "",
            "GITHUB_ACTOR": self.actor,
            "GITHUB_ACTOR_ID": "1",
            "GITHUB_API_URL": self.api_url,
            "GITHUB_BASE_REF": "main" if self.event_name.startswith("pull_request") else "",
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(layout.event_path),
            "GITHUB_GRAPHQL_URL": self.api_url.rstrip("/") + "/graphql",
            "GITHUB_HEAD_REF": "feature" if self.event_name.startswith("pull_request") else "",
            "GITHUB_JOB": self.job,
            "GITHUB_REF": self.ref,
            "GITHUB_REF_NAME": self.ref.removeprefix("refs/pull/").removeprefix("refs/heads/"),
            "GITHUB_REF_PROTECTED": "false",
            "GITHUB_REF_TYPE": "branch",
            "GITHUB_REPOSITORY": self.repository,
            "GITHUB_REPOSITORY_ID": "1",
            "GITHUB_REPOSITORY_OWNER": owner,
            "GITHUB_REPOSITORY_OWNER_ID": "1",
            "GITHUB_RETENTION_DAYS": "90",
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_RUN_ID": self.run_id,
            "GITHUB_RUN_NUMBER": "1",
            "GITHUB_SERVER_URL": self.server_url,
            "GITHUB_SHA": self.sha,
            "GITHUB_TRIGGERING_ACTOR": self.actor,
            "GITHUB_WORKFLOW": self.workflow,
            "GITHUB_WORKFLOW_REF": f"{self.repository}/.github/workflows/{self.workflow}.yml@{self.ref}",
            "GITHUB_WORKFLOW_SHA": self.sha,
            "GITHUB_WORKSPACE": str(layout.workspace),
        }
        values.update({name: str(layout.file_command(name, step)) for name in FILE_COMMANDS})
        return values


def runner_variables(layout: RunnerLayout) -> dict[str, str]:
    """RUNNER_* of a hosted Linux runner (RunnerContext.cs); only RUNNER_TEMP has a container path."""
    return {
        "RUNNER_ARCH": "X64",
        "RUNNER_ENVIRONMENT": "github-hosted",
        "RUNNER_NAME": "GitHub Actions 1",
        "RUNNER_OS": "Linux",
        "RUNNER_TEMP": str(layout.temp),
        "RUNNER_TOOL_CACHE": "/opt/hostedtoolcache",
        "RUNNER_WORKSPACE": str(layout.workspace.parent),
    }


def declared_inputs(action_yml: Path) -> dict[str, str]:
    """Each input action.yml declares, with its default ("" when it has none)."""
    metadata = yaml.safe_load(action_yml.read_text(encoding="utf-8"))
    declared = metadata.get("inputs") or {}
    return {name: str((spec or {}).get("default", "")) for name, spec in declared.items()}


def input_variables(action_yml: Path, given: Mapping[str, str], token: str) -> dict[str, str]:
    """INPUT_* for every declared input: the step's value, else the evaluated default (Handler.cs).

    A name action.yml does not declare is refused: the runner would only warn, and a test that
    passes an input the Action cannot see proves nothing.
    """
    declared = declared_inputs(action_yml)
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ValueError(f"inputs not declared in {action_yml}: {', '.join(unknown)}")
    values = {name: given.get(name, default) for name, default in declared.items()}
    values = {name: token if TOKEN_EXPRESSION.match(value) else value for name, value in values.items()}
    return {f"INPUT_{name.replace(' ', '_').upper()}": value for name, value in values.items()}


@dataclass(frozen=True)
class ContainerStep:
    """One `uses:` step of a Docker action, as the runner turns it into `docker run`."""

    image: str
    layout: RunnerLayout
    step: str  # names the step's file commands (the runner uses a fresh GUID per step)
    inputs: Mapping[str, str]  # INPUT_* variables, from input_variables()
    env: Mapping[str, str] = field(default_factory=dict)  # the step's (and job's) `env:`
    github: GithubContext = field(default_factory=GithubContext)
    network: str | None = None  # the job's network; None: the engine's default bridge
    runtime_token: str = field(default_factory=lambda: secrets.token_hex(16))

    def environment(self) -> dict[str, str]:
        """Every variable the container gets, with its value as seen inside the container.

        The order of ContainerActionHandler: the step's env, the inputs over it, HOME, then the
        contexts and the Actions runtime over everything; each value path-translated.
        """
        values = {**self.env, **self.inputs, "HOME": str(self.layout.home)}
        values.update(self.github.variables(self.layout, self.step))
        values.update(runner_variables(self.layout))
        values.update(
            {
                "ACTIONS_RUNTIME_URL": "https://pipelines.actions.githubusercontent.invalid/",
                "ACTIONS_RUNTIME_TOKEN": self.runtime_token,
                "ACTIONS_RESULTS_URL": "https://results-receiver.actions.githubusercontent.invalid/",
            }
        )
        return {name: self.layout.to_container_path(value) for name, value in values.items()}

    def argv(self, container_name: str = "smoke", label: str = "smoke0") -> list[str]:
        """`docker run` as DockerCommandManager.DockerRun builds it (no values on the command line)."""
        environment = self.environment()
        argv = ["docker", "run", "--name", container_name, "--label", label]
        argv += ["--workdir", CONTAINER_WORKSPACE, "--rm"]
        for name in environment:
            argv += ["-e", name]
        argv += ["-e", "GITHUB_ACTIONS=true"]
        if "CI" not in environment:
            argv += ["-e", "CI=true"]
        if self.network:
            argv += ["--network", self.network]
        for host, container in self.layout.mounts():
            argv += ["-v", f"{host}:{container}"]
        return [*argv, self.image]

    def process_environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The docker CLI's own environment: where `-e NAME` takes each value from."""
        return {**base, **self.environment()}


def bridge_available() -> bool:
    """Whether the engine has its default bridge network (not so under `dockerd --bridge=none`)."""
    found = subprocess.run(
        ["docker", "network", "inspect", "bridge"], capture_output=True, text=True, timeout=60, check=False
    )
    return found.returncode == 0


def bridge_gateway() -> str:
    """The host's address as a container on the default bridge sees it (docker0, e.g. 172.17.0.1)."""
    inspected = subprocess.run(
        ["docker", "network", "inspect", "bridge", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    gateways = inspected.stdout.split()
    if not gateways:
        raise RuntimeError("the default bridge network has no gateway")
    return gateways[0]


def shown(argv: Sequence[str]) -> str:
    """The command line as the runner logs it: names only, so no value (no secret) is printed."""
    return " ".join(f'"{part}"' if " " in part else part for part in argv)


def _pairs(items: Sequence[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"{what} {item!r}: expected NAME=VALUE")
        pairs[name] = value
    return pairs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.runner_container", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--action", type=Path, default=Path("action.yml"), help="the action.yml whose inputs to pass")
    parser.add_argument("--image", required=True)
    parser.add_argument("--temp", type=Path, required=True, help="the runner's temp directory on the host")
    parser.add_argument("--workspace", type=Path, required=True, help="the job's workspace on the host")
    parser.add_argument("--step", required=True, help="names the step's file commands and container")
    parser.add_argument("--token", default="", help="the value of ${{ github.token }}")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=VALUE", help="a `with:` input")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="a step `env:` variable")
    parser.add_argument("--event", type=Path, required=True, help="the event payload (JSON)")
    parser.add_argument("--event-name", default="pull_request")
    parser.add_argument("--repository", default="acme/widgets")
    parser.add_argument("--api-url", default="https://api.github.com")
    parser.add_argument("--network", default=None, help="the job's network (none: the default bridge)")
    parser.add_argument("--log", type=Path, required=True, help="where the container's output goes too")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    layout = RunnerLayout(args.temp.resolve(), args.workspace.resolve())
    step = ContainerStep(
        image=args.image,
        layout=layout,
        step=args.step,
        inputs=input_variables(args.action, _pairs(args.input, "--input"), args.token),
        env=_pairs(args.env, "--env"),
        github=GithubContext(event_name=args.event_name, repository=args.repository, api_url=args.api_url),
        network=args.network,
    )
    layout.prepare(args.step, json.loads(args.event.read_text(encoding="utf-8")))
    command = step.argv(container_name=f"smoke_{args.step}_{secrets.token_hex(3)}")
    print(f"[runner] {shown(command)}", flush=True)
    with args.log.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            command,
            env=step.process_environment(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert process.stdout is not None  # stdout=PIPE
        for line in process.stdout:
            sys.stdout.write(line)
            log.write(line)
        return process.wait()


if __name__ == "__main__":
    raise SystemExit(main())
