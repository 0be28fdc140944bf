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


def _steps_using(job: dict[str, Any], action: str) -> list[int]:
    return [i for i, step in enumerate(job["steps"]) if action in step.get("uses", "")]


def _steps_running(job: dict[str, Any], script: str) -> list[int]:
    return [i for i, step in enumerate(job["steps"]) if script in step.get("run", "")]


def test_the_wheel_is_built_installed_fresh_and_run_before_anything_is_published() -> None:
    jobs = workflow()["jobs"]
    wheel = jobs["wheel"]
    assert wheel["permissions"] == {"contents": "read"}  # building and checking need no write access
    (build,) = _steps_running(wheel, "scripts/build_wheel.py --out dist")
    (check,) = _steps_running(wheel, "scripts/check_wheel.py")
    (upload,) = _steps_using(wheel, "actions/upload-artifact@")
    assert build < check < upload
    checked = wheel["steps"][check]["run"].split("scripts/check_wheel.py", 1)[1].strip().strip('"')
    uploaded = wheel["steps"][upload]["with"]["path"]
    assert checked == "dist/llm_stability_gate-$VERSION-py3-none-any.whl"
    assert uploaded == "dist/llm_stability_gate-${{ env.VERSION }}-py3-none-any.whl"  # the very file checked
    assert wheel["steps"][upload]["with"]["if-no-files-found"] == "error"


def test_pypi_gets_the_checked_wheel_by_trusted_publishing_only_after_the_images() -> None:
    jobs = workflow()["jobs"]
    pypi = jobs["pypi"]
    assert {"wheel", "floating-tags"} <= set(pypi["needs"])
    assert pypi["permissions"] == {"id-token": "write"}  # OIDC, and nothing else
    assert pypi["environment"]["name"] == "pypi"
    (download,) = _steps_using(pypi, "actions/download-artifact@")
    (publish,) = _steps_using(pypi, "pypa/gh-action-pypi-publish@")
    assert download < publish and len(pypi["steps"]) == 2  # nothing rebuilt between the check and the upload
    assert pypi["steps"][download]["with"]["name"] == jobs["wheel"]["steps"][-1]["with"]["name"]
    assert set(pypi["steps"][publish]["with"]) == {"packages-dir"}  # no password, no user, no token
    assert "secrets." not in str(pypi)
    assert "pypi" in jobs["release"]["needs"]  # the git tags follow the package too
    publishers = [name for name, job in jobs.items() if "gh-action-pypi-publish" in str(job)]
    assert publishers == ["pypi"]


def test_the_plan_refuses_a_version_the_package_does_not_say(tmp_path: Path) -> None:
    """The wheel is named after pyproject.toml's version: a release of another version stops first."""
    import subprocess

    script = next(s["run"] for s in workflow()["jobs"]["plan"]["steps"] if s.get("id") == "version")
    (tmp_path / "stabilitygate").mkdir()
    for name in ("pyproject.toml", "stabilitygate/version.py"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # no origin: no tag is found
    outputs = tmp_path / "outputs"

    def plan(version: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": "/usr/bin:/bin", "VERSION": version, "REF": "refs/heads/main", "REPOSITORY": "Org/Gate"}
        env["GITHUB_OUTPUT"] = str(outputs)
        return subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)

    wrong = plan("9.9.9")
    assert wrong.returncode == 1
    assert "::error::pyproject.toml does not say version 9.9.9: bump it on main first" in wrong.stdout
    current = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert current is not None
    right = plan(current.group(1))
    assert right.returncode == 0, right.stdout + right.stderr
    assert f"version={current.group(1)}" in outputs.read_text()
