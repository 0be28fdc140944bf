"""The workflow recipes work as written: each file parsed and its gate step checked, one cache key
everywhere, the image that carries the embedded model where a recipe uses it, and the command that
points a suite at a model server on the runner reaching every address (docs/action.md, "Recipes")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from stabilitygate.pipeline.starter import starter

ROOT = Path(__file__).resolve().parent.parent
RECIPES = sorted((ROOT / "docs" / "workflows").glob("*.yml"))
CACHE_KEY = "llm-stability-embeddings-all-MiniLM-L6-v2-${{ github.run_id }}-${{ github.run_attempt }}"
LOCAL_IMAGE = "docker://ghcr.io/org/llm-stability-gate:v1-local"


def readme_workflow() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("### In a GitHub workflow\n\n```yaml\n", 1)[1].split("```", 1)[0]


def every_workflow() -> dict[str, str]:
    """Each recipe, the README's, and what `init` writes for each provider, by a name for the test's ids."""
    found = {path.name: path.read_text() for path in RECIPES}
    found["README.md"] = readme_workflow()
    for provider in ("openai", "anthropic", "local"):
        for path, text in starter({}, provider).files[1:]:
            found[f"init {provider} {Path(path).name}"] = text
    return found


WORKFLOWS = every_workflow()


def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def gate_steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in steps(workflow) if "llm-stability-gate" in str(step.get("uses", ""))]


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_every_workflow_parses_and_its_gate_step_gets_what_it_needs(name: str) -> None:
    workflow = yaml.safe_load(WORKFLOWS[name])
    gates = gate_steps(workflow)
    assert gates, name
    for step in gates:
        inputs = step.get("with", {})
        assert "suite" in inputs or "comment-from" in inputs or "merge" in inputs, (name, step)
        if step["uses"].startswith("docker://"):  # the image form: no input defaults from action.yml
            comments = inputs.get("comment", "true") != "false"
            assert not comments or inputs.get("github-token") == "${{ github.token }}", (name, step)


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_one_cache_key_everywhere(name: str) -> None:
    keys = [s["with"]["key"] for s in steps(yaml.safe_load(WORKFLOWS[name])) if "actions/cache" in s.get("uses", "")]
    for key in keys:  # a shard's and the merge's keys add their own part after it
        assert key == CACHE_KEY or key.startswith(CACHE_KEY + "-"), (name, key)


def test_a_recipe_that_runs_the_embedded_model_uses_the_image_that_carries_it() -> None:
    fork_safe = WORKFLOWS["stability-fork-safe.yml"]
    assert "built-in local provider" in fork_safe  # what the recipe tells a fork's suite to use ...
    (gate,) = gate_steps(yaml.safe_load(fork_safe))
    assert gate["uses"] == LOCAL_IMAGE  # ... and the image that has it
    for name, text in WORKFLOWS.items():
        if name.startswith("init local"):
            assert [g["uses"] for g in gate_steps(yaml.safe_load(text))] == [LOCAL_IMAGE]


def rewrite_command() -> str:
    """The recipe's command that points a suite at the model server on the runner, from docs/action.md."""
    section = (ROOT / "docs" / "action.md").read_text().split("- name: Point the suite at the model server", 1)[1]
    (command,) = [line.strip() for line in section.split("```", 1)[0].splitlines() if line.strip().startswith("sed ")]
    return command


SERVED = """\
version: 1
name: served
provider:
  type: openai
  model: m
  base_url: http://127.0.0.1:8000/v1
cases:
  - id: nested
    prompt: p
    provider:
        base_url: "http://localhost:8000/v1"
  - id: flow
    prompt: q
    provider: {type: openai, model: m, base_url: http://127.0.0.1:8001/v1}
  - id: app
    prompt: r
    provider:
      type: http
      url: 'http://localhost:9000/classify'
      completion_pointer: /label
  - id: hosted
    prompt: s
    provider: {base_url: https://api.example.com/v1}
"""


def test_the_model_server_recipe_rewrites_every_address_key_at_any_indentation(tmp_path: Path) -> None:
    suite = tmp_path / ".stability" / "suite.yml"
    suite.parent.mkdir()
    suite.write_text(SERVED)
    done = subprocess.run(
        ["bash", "-c", f"set -eu; gateway=172.17.0.1; {rewrite_command()}"], cwd=tmp_path, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load(suite.read_text())
    addresses = [data["provider"]["base_url"], *(c["provider"].get("base_url") for c in data["cases"][:2])]
    assert addresses == ["http://172.17.0.1:8000/v1", "http://172.17.0.1:8000/v1", "http://172.17.0.1:8001/v1"]
    assert data["cases"][2]["provider"]["url"] == "http://172.17.0.1:9000/classify"
    assert data["cases"][3]["provider"]["base_url"] == "https://api.example.com/v1"  # not a local address
    assert not re.search(r"127\.0\.0\.1|localhost", suite.read_text())
    checked = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "validate"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr  # still a valid suite, at the default path
