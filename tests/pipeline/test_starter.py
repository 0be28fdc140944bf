"""`stabilitygate init`, through the real command: what it writes for the keys the environment holds, that
the files work as written (the suite validates at the default path, the workflows are the recipes of
docs/workflows), and that it overwrites nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WRITTEN = (
    ".stability/suite.yml",
    ".github/workflows/llm-stability.yml",
    ".github/workflows/llm-stability-baseline.yml",
)
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def stabilitygate(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run(
        [sys.executable, "-m", "stabilitygate", *args],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def gate_step(workflow: dict[str, Any]) -> dict[str, Any]:
    (job,) = workflow["jobs"].values()
    return next(step for step in job["steps"] if step.get("id") == "gate")


@pytest.mark.parametrize(
    ("env", "provider", "secret"),
    [
        ({"OPENAI_API_KEY": "sk-test-0123456789", "ANTHROPIC_API_KEY": "sk-ant-0123456789"}, "openai", KEYS[0]),
        ({"ANTHROPIC_API_KEY": "sk-ant-0123456789"}, "anthropic", KEYS[1]),
        ({}, "local", None),
    ],
)
def test_init_writes_a_suite_for_the_key_that_is_set_and_the_two_workflows(
    tmp_path: Path, env: dict[str, str], provider: str, secret: str | None
) -> None:
    done = stabilitygate(tmp_path, "init", **env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"stabilitygate: provider {provider} (")
    assert lines[1:4] == [f"wrote {path}" for path in WRITTEN]
    assert lines[4].startswith("next: stabilitygate run --update-baseline")
    assert (secret in lines[5]) if secret else "secret" not in lines[5]
    suite = yaml.safe_load((tmp_path / WRITTEN[0]).read_text())
    assert suite["provider"]["type"] == provider and len(suite["cases"]) == 3
    assert (tmp_path / WRITTEN[0]).read_text().startswith("# A starter suite, written by `stabilitygate init`.")
    for workflow in WRITTEN[1:]:
        step = gate_step(yaml.safe_load((tmp_path / workflow).read_text()))
        assert step["with"]["suite"] == ".stability/suite.yml"
        if provider == "local":  # the embedded model lives in the -local image, which takes no defaults
            assert step["uses"] == "docker://ghcr.io/org/llm-stability-gate:v1-local" and "env" not in step
            assert step["with"].get("comment") == "false" or step["with"]["github-token"] == "${{ github.token }}"
        else:
            assert step["uses"] == "org/llm-stability-gate@v1"
            assert step["env"] == {secret: f"${{{{ secrets.{secret} }}}}"}
    # The suite is valid where every command looks by default: no path given.
    checked = stabilitygate(tmp_path, "validate", **env)
    assert checked.returncode == 0 and checked.stdout == ".stability/suite.yml: valid (3 cases, 30 samples)\n"


def test_the_openai_rendition_is_the_published_recipe(tmp_path: Path) -> None:
    assert stabilitygate(tmp_path, "init", "--provider", "openai").returncode == 0
    for written, recipe in zip(WRITTEN[1:], ("stability.yml", "stability-baseline.yml"), strict=True):
        assert (tmp_path / written).read_text() == (ROOT / "docs" / "workflows" / recipe).read_text()


def test_init_overwrites_nothing_and_writes_nothing_when_a_file_is_there(tmp_path: Path) -> None:
    workflow = tmp_path / WRITTEN[2]
    workflow.parent.mkdir(parents=True)
    workflow.write_text("mine\n")
    done = stabilitygate(tmp_path, "init")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"stabilitygate: error: {WRITTEN[2]}: already exists: init writes nothing over a file (move it away, or "
        "edit it instead)"
    )
    assert workflow.read_text() == "mine\n" and not (tmp_path / WRITTEN[0]).exists()


def test_without_a_suite_at_the_default_path_every_command_says_how_to_get_one(tmp_path: Path) -> None:
    for args in (["validate"], ["plan"], ["run"], ["score", "samples.jsonl"]):
        (tmp_path / "samples.jsonl").write_text("")
        done = stabilitygate(tmp_path, *args)
        assert done.returncode == 2, args
        assert done.stderr.strip() == (
            "stabilitygate: error: .stability/suite.yml: no such file (the default suite path: give the suite's "
            "path, or `stabilitygate init` writes a starter suite there)"
        ), args
