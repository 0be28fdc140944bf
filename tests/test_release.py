"""The release workflow moves nothing unverified and runs third-party code by commit only."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RELEASE = ROOT / ".github" / "workflows" / "release.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(RELEASE.read_text())
    return loaded


def test_every_third_party_action_is_pinned_by_commit_with_its_version() -> None:
    lines = [line.strip().removeprefix("- ") for line in RELEASE.read_text().splitlines()]
    uses = [line.removeprefix("uses: ") for line in lines if line.startswith("uses: ")]
    assert uses, "release.yml uses no action at all?"
    for use in uses:
        assert PINNED.fullmatch(use), f"not pinned by commit SHA with its version in a comment: {use}"


def test_the_image_job_pushes_only_the_versions_own_tags() -> None:
    steps = workflow()["jobs"]["image"]["steps"]
    pushes = [step for step in steps if "build-push-action" in step.get("uses", "")]
    assert len(pushes) == 2
    tags = sorted(str(step["with"]["tags"]).strip() for step in pushes)
    assert tags == ["${{ env.IMAGE }}:${{ env.VERSION }}", "${{ env.IMAGE }}:${{ env.VERSION }}-local"]
    assert "MINOR" not in str(steps) and "MAJOR" not in str(steps)


def test_floating_tags_move_only_after_the_anonymous_pulls_pass() -> None:
    jobs = workflow()["jobs"]
    assert "docker pull" in str(jobs["verify"]["steps"]) and "docker logout" in str(jobs["verify"]["steps"])
    assert "packages" not in jobs["verify"]["permissions"]
    floating = jobs["floating-tags"]
    assert "verify" in floating["needs"] and floating["permissions"]["packages"] == "write"
    script = "\n".join(step.get("run", "") for step in floating["steps"])
    for tag in ("$MINOR", "$MAJOR", "$MINOR-local", "$MAJOR-local"):
        assert f'--tag "$IMAGE:{tag}"' in script
    assert script.count("docker buildx imagetools create") == 2
    assert "floating-tags" in jobs["release"]["needs"]  # the git tags follow the images
    only_here = [name for name, job in jobs.items() if "imagetools create" in str(job)]
    assert only_here == ["floating-tags"]
