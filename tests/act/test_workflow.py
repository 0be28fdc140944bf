"""The workflow scripts/act_smoke_test.sh runs through nektos/act is a valid workflow of this Action."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.test_action_lint import OFFLINE, actionlint, run, tool

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "tests" / "act" / "workflow.yml"


def test_the_act_workflow_passes_the_workflow_schema_and_actionlint() -> None:
    schema = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)], **OFFLINE)
    assert schema.returncode == 0, schema.stdout + schema.stderr
    lint = run([*actionlint(), str(WORKFLOW)])
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_act_workflow_runs_this_checkout_and_only_declared_inputs() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    declared = set(yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"])
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    ours = [step for step in steps if step.get("uses") == "./"]
    assert len(ours) == 1
    assert set(ours[0]["with"]) <= declared
    # The job summary is read from act's log for the gate's step: it must be the job's last step.
    assert workflow["jobs"]["gate"]["steps"][-1] is ours[0]
    # GitHub runs only .github/workflows/; this file must never become a workflow of the repository.
    assert not WORKFLOW.is_relative_to(ROOT / ".github")
