"""scripts/pin_action_image.py: the release commit's action.yml pulls the pushed image by digest, passes
GitHub's action-metadata schema and keeps every input, default and output of main's action.yml."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "pin_action_image.py"
IMAGE = "ghcr.io/acme/llm-stability-gate:1.4.2"
DIGEST = "sha256:" + "0123456789abcdef" * 4
REFERENCE = f"docker://{IMAGE}@{DIGEST}"
# No network: the schema is check-jsonschema's vendored copy (a dead proxy catches any fetch).
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("pin_action_image", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


pin_action_image = load_script()


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )


def check_jsonschema() -> str:
    beside = Path(sys.executable).parent / "check-jsonschema"
    found = str(beside) if beside.exists() else shutil.which("check-jsonschema")
    if found is None:
        pytest.fail("check-jsonschema is not installed: run scripts/setup.sh (it installs the dev tools)")
    return found


def schema_check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [check_jsonschema(), "--builtin-schema", "vendor.github-actions", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **OFFLINE},
        check=False,
    )


def metadata(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture
def pinned(tmp_path: Path) -> Path:
    """main's action.yml, pinned by the script run as the release workflow runs it."""
    output = tmp_path / "action.yml"
    result = run_script("--image", IMAGE, "--digest", DIGEST, "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == REFERENCE
    return output


def test_the_pinned_file_passes_the_action_metadata_schema(pinned: Path) -> None:
    result = schema_check(pinned)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_would_catch_a_broken_rewrite(pinned: Path) -> None:
    broken = pinned.with_name("broken.yml")
    broken.write_text(pinned.read_text(encoding="utf-8").replace("  image:", "  imaeg:"), encoding="utf-8")
    assert schema_check(broken).returncode != 0


def test_the_runner_is_told_to_pull_the_pushed_digest(pinned: Path) -> None:
    runs = metadata(pinned)["runs"]
    assert runs == {**metadata(ROOT / "action.yml")["runs"], "image": REFERENCE}
    assert runs["using"] == "docker"


def test_every_input_default_and_output_survives(pinned: Path) -> None:
    source, rewritten = metadata(ROOT / "action.yml"), metadata(pinned)
    assert source["inputs"], "main's action.yml has inputs"
    assert list(rewritten["inputs"]) == list(source["inputs"])
    for name, spec in source["inputs"].items():
        assert rewritten["inputs"][name] == spec, name
        assert rewritten["inputs"][name].get("default") == spec.get("default"), name
    assert rewritten["outputs"] == source["outputs"]
    assert {k: v for k, v in rewritten.items() if k != "runs"} == {k: v for k, v in source.items() if k != "runs"}


def test_only_the_image_line_changes(pinned: Path) -> None:
    before = (ROOT / "action.yml").read_text(encoding="utf-8").splitlines()
    after = pinned.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f'  image: "{REFERENCE}"')]


def test_in_place_by_default_and_the_source_is_left_alone_with_output(tmp_path: Path) -> None:
    target = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", target)
    source_before = (ROOT / "action.yml").read_bytes()
    result = run_script("--image", IMAGE, "--digest", DIGEST, "--file", str(target))
    assert result.returncode == 0, result.stderr
    assert metadata(target)["runs"]["image"] == REFERENCE
    assert (ROOT / "action.yml").read_bytes() == source_before


def test_comments_quotes_and_line_endings_are_kept() -> None:
    text = (
        "name: x\r\ndescription: y\r\nruns:\r\n  # the image\r\n  using: docker\r\n"
        "  image: 'Dockerfile'   # built from source on main\r\n  args: [a]\r\nbranding: {icon: x}\r\n"
    )
    out = pin_action_image.pin(text, REFERENCE)
    assert out == text.replace("  image: 'Dockerfile'", f'  image: "{REFERENCE}"')
    assert yaml.safe_load(out)["runs"]["image"] == REFERENCE


def test_an_image_key_elsewhere_is_not_touched() -> None:
    text = (
        "name: x\ndescription: y\ninputs:\n  image:\n    description: d\n    default: Dockerfile\n"
        "runs:\n  using: docker\n  image: Dockerfile\n  env:\n    image: Dockerfile\n"
    )
    data = yaml.safe_load(pin_action_image.pin(text, REFERENCE))
    assert data["runs"]["image"] == REFERENCE
    assert data["runs"]["env"] == {"image": "Dockerfile"}
    assert data["inputs"]["image"]["default"] == "Dockerfile"


@pytest.mark.parametrize(
    ("image", "digest", "says"),
    [
        (IMAGE, "sha256:abc", "--digest"),
        (IMAGE, DIGEST.upper(), "--digest"),
        (IMAGE, "", "--digest"),
        ("ghcr.io/Acme/llm-stability-gate:1.4.2", DIGEST, "--image"),
        (f"docker://{IMAGE}", DIGEST, "--image"),
        (f"{IMAGE}@{DIGEST}", DIGEST, "--image"),
        ("ghcr.io/acme/llm-stability-gate", DIGEST, "--image"),
    ],
)
def test_a_bad_reference_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, image: str, digest: str, says: str
) -> None:
    target = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", target)
    result = run_script("--image", image, "--digest", digest, "--file", str(target))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and says in result.stderr
    assert target.read_bytes() == (ROOT / "action.yml").read_bytes()


def test_a_file_already_pinned_is_refused(pinned: Path) -> None:
    result = run_script("--image", IMAGE, "--digest", DIGEST, "--file", str(pinned))
    assert result.returncode == 2
    assert "not 'Dockerfile'" in result.stderr and str(pinned) in result.stderr
    assert metadata(pinned)["runs"]["image"] == REFERENCE


def test_a_missing_file_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yml"
    result = run_script("--image", IMAGE, "--digest", DIGEST, "--file", str(missing))
    assert result.returncode == 2 and str(missing) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nruns:\n  using: composite\n  steps: []\n",
        "name: x\nruns:\n  using: docker\n  image: Dockerfile\n  image: Dockerfile\n",
        "name: x\n",
    ],
)
def test_a_file_without_exactly_one_runs_image_is_refused(text: str) -> None:
    with pytest.raises(pin_action_image.PinError, match="expected one"):
        pin_action_image.pin(text, REFERENCE)
