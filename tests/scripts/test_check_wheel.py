"""scripts/check_wheel.py, which the release runs between building the wheel and publishing it: a
semantic run from an installed `stabilitygate`, and the report refused unless the model measured."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_wheel.py"
STABILITYGATE = Path(sys.executable).parent / "stabilitygate"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_semantic_run_from_an_installed_stabilitygate_passes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--stabilitygate", str(STABILITYGATE)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("check_wheel: ok: a semantic run on all-MiniLM-L6-v2 from the installed wheel")


def test_a_report_without_the_semantic_layer_is_refused() -> None:
    script = load_script()
    case = {"metrics": {"cosine_min": None}}
    for report, said in [
        ({"run": {"embedding": None}, "cases": [case]}, "names no semantic layer on all-MiniLM-L6-v2"),
        ({"run": {"embedding": {"model": "all-MiniLM-L6-v2", "texts_embedded": 0}}, "cases": []}, "embedded 0 texts"),
        ({"run": {"embedding": {"model": "all-MiniLM-L6-v2", "texts_embedded": 3}}, "cases": [case]}, "0 of 2 cases"),
    ]:
        with pytest.raises(script.CheckFailed, match=said):
            script.check_report(report)


def test_a_wheel_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "llm_stability_gate-0.1.0-py3-none-any.whl"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(missing)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"check_wheel: error: {missing}: no such wheel"
