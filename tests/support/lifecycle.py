"""A suite's everyday life, driven from outside: the CLI and the Action as processes, one embedding cache.

`tests/test_lifecycle.py` records a baseline and reruns the suite the way a team does (unchanged, with
one new completion, with every completion new, changed-only, sharded, interrupted), against
`ScriptedModel`, a loopback OpenAI server whose answers a test swaps between steps. Every process
runs under a hard timeout (`STEP_TIMEOUT_S`): a gate that hangs fails its test, never the suite.

    with ScriptedModel(SCRIPT, api_key=API_KEY) as model:
        life = Life(tmp_path, cache_dir, model)
        suite = life.write_suite(CASES)
        step = life.cli("run", str(suite), "--update-baseline")
        step.code, step.report, step.embedded  # (texts run through the model, texts from the cache)
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.github_outputs import read_outputs
from tests.support.openai_server import Distribution, Fault, ScriptedOpenAI, last_user_message

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-lifecycle-secret-0123456789abcdef"
KEY_ENV = "LIFECYCLE_API_KEY"
COMMIT = "0123456789abcdef0123456789abcdef01234567"  # $GITHUB_SHA: picks the canaries
# A step takes seconds; only a gate that hangs comes near this, and then its test fails.
STEP_TIMEOUT_S = 180
# No early stop and no threshold: every step draws all N samples of every case it runs.
# max_samples = samples: one fixed stage, so that every step draws exactly N samples whatever order the
# scripted answers come in (these tests count samples and embedded texts; tests/pipeline/test_stages.py
# runs the default design with checks).
SAMPLING = {"samples": 10, "max_samples": 10, "concurrency": 4, "timeout_s": 60, "retries": 1, "early_stop": False}
_EMBEDDED = re.compile(r"embedded (\d+) distinct texts \((\d+) by the model, (\d+) from the cache\)")


class ScriptedModel(ScriptedOpenAI):
    """The scripted OpenAI server, whose answers can change between steps (`answer`), and can be held.

    `hold_after(n)` answers n more requests and holds every later one until `release()` (or close),
    so a test can interrupt a run at a known count of samples.
    """

    def __init__(self, script: Mapping[str, Distribution], **kwargs: Any) -> None:
        super().__init__({}, **kwargs)
        self._swap = threading.Lock()
        self._script: dict[str, list[str]] = {}
        self._cycles: dict[str, itertools.cycle[str]] = {}
        self._released = threading.Event()
        self.answer(script)

    def answer(self, script: Mapping[str, Distribution]) -> None:
        """From now on, each prompt's completions cycle through this distribution, from its start."""
        with self._swap:
            self._script = {prompt: [t for t, w in dist for _ in range(w)] for prompt, dist in script.items()}
            self._cycles = {}

    def hold_after(self, served: int) -> None:
        """Answer `served` more requests, then hold every later one until `release()`."""
        self._released.clear()
        last = self.count + served

        def hold(body: Mapping[str, Any], number: int) -> bool:
            if number > last:
                self._released.wait()
            return False  # then answered as usual

        self.faults = [Fault("status", when=hold)]

    def release(self) -> None:
        self._released.set()

    def _before_shutdown(self) -> None:
        self.release()
        super()._before_shutdown()

    def _next_text(self, body: Mapping[str, Any]) -> str:
        prompt = last_user_message(body) or ""
        with self._swap:
            if prompt not in self._script:
                return "unscripted"
            cycle = self._cycles.setdefault(prompt, itertools.cycle(self._script[prompt]))
            return next(cycle)


@dataclass(frozen=True)
class Step:
    """One finished process: exit code, streams, and the report it wrote."""

    code: int
    stdout: str
    stderr: str
    report_path: Path

    @property
    def report(self) -> dict[str, Any]:
        assert self.report_path.exists(), f"no report written; exit {self.code}\n{self.stderr}"
        data: dict[str, Any] = json.loads(self.report_path.read_text(encoding="utf-8"))
        return data

    @property
    def report_bytes(self) -> bytes:
        return self.report_path.read_bytes()

    @property
    def markdown_bytes(self) -> bytes:
        return self.report_path.with_suffix(".md").read_bytes()

    @property
    def embedded(self) -> tuple[int, int]:
        """(texts run through the model, texts read from the cache), from the CLI's summary line."""
        match = _EMBEDDED.search(self.stderr)
        assert match is not None, f"no embedding line in:\n{self.stderr}"
        return int(match[2]), int(match[3])

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


class Life:
    """A workspace, one embedding cache shared by every step, and the commands a team runs."""

    def __init__(self, root: Path, cache: Path, model: ScriptedModel) -> None:
        self.root = root
        self.cache = cache
        self.model = model
        self.reports = root / "reports"
        self.reports.mkdir(parents=True, exist_ok=True)
        self._steps = itertools.count(1)

    def write_suite(self, cases: Sequence[Mapping[str, Any]], path: Path | None = None, **top: Any) -> Path:
        suite = {
            "version": 1,
            "name": "lifecycle",
            "provider": {
                "type": "openai",
                "model": "scripted-model",
                "base_url": self.model.base_url,
                "api_key_env": KEY_ENV,
                "params": {"temperature": 0},
            },
            "sampling": dict(SAMPLING),
            "cases": list(cases),
            **top,
        }
        target = path or self.root / "suite.yml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
        return target

    def env(self, cache: Path | None = None) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(ROOT),
            "HOME": str(self.root / "home"),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "STABILITYGATE_CACHE_DIR": str(cache or self.cache),
            "GITHUB_SHA": COMMIT,
            KEY_ENV: API_KEY,
        }

    def cli_args(self, args: Sequence[str], report: Path) -> list[str]:
        files = ["--report-json", str(report), "--markdown", str(report.with_suffix(".md"))]
        return [sys.executable, "-m", "stabilitygate", *args, *files]

    def cli(self, *args: str, cache: Path | None = None, name: str | None = None) -> Step:
        """`stabilitygate ARGS --report-json R` as a process, with the shared cache (or `cache`)."""
        report = self.reports / f"{name or next(self._steps)}.json"
        report.unlink(missing_ok=True)
        report.with_suffix(".md").unlink(missing_ok=True)
        done = subprocess.run(
            self.cli_args([*args, "--no-progress"] if args[0] == "run" else args, report),
            cwd=self.root,
            env=self.env(cache),
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
            check=False,
        )
        return Step(done.returncode, done.stdout, done.stderr, report)

    def start_cli(self, *args: str, report: Path) -> subprocess.Popen[str]:
        """The CLI started and left running (the caller interrupts it)."""
        return subprocess.Popen(
            self.cli_args(args, report),
            cwd=self.root,
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@dataclass(frozen=True)
class ActionStep:
    """One run of the Action's entrypoint: exit code, log, job summary and step outputs."""

    code: int
    log: str
    summary: str
    outputs: dict[str, str]
    report_bytes: bytes


class ActionRunner:
    """entrypoint.py run as the runner runs a Docker action: INPUT_* variables, a workspace, its files."""

    def __init__(self, life: Life, workspace: Path) -> None:
        self.life = life
        self.workspace = workspace
        self.temp = life.root / "runner_temp"
        self.temp.mkdir(parents=True, exist_ok=True)
        self._runs = itertools.count(1)

    def run(self, **inputs: str) -> ActionStep:
        number = next(self._runs)
        output, summary = self.temp / f"output_{number}", self.temp / f"summary_{number}"
        output.touch()
        summary.touch()
        event = self.temp / "event.json"
        event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}), encoding="utf-8")
        given = {"suite": ".stability/suite.yml", "comment": "false", "fail-on": "regression", **inputs}
        env = {
            **self.life.env(),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_REPOSITORY": "acme/widgets",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "RUNNER_TEMP": str(self.temp),
            **{f"INPUT_{name.replace('_', '-').upper()}": value for name, value in given.items()},
        }
        done = subprocess.run(
            [sys.executable, str(ROOT / "entrypoint.py")],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT_S,
            check=False,
        )
        report = self.workspace / ".stabilitygate" / "report.json"
        return ActionStep(
            done.returncode,
            done.stdout + done.stderr,
            summary.read_text(encoding="utf-8"),
            read_outputs(output),
            report.read_bytes() if report.exists() else b"",
        )


def wait_for_lines(path: Path, count: int, process: subprocess.Popen[str]) -> None:
    """Until the samples file holds `count` lines (held requests keep it from growing past them)."""
    deadline = time.monotonic() + STEP_TIMEOUT_S  # reached only by a gate that stopped sampling
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        assert process.poll() is None, f"the run ended early: {process.communicate()}"
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {count} lines")
