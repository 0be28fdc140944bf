from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import (
    MANIFEST_NAME,
    MODEL_DIR_ENV,
    OnnxEncoder,
    export_dir,
    read_manifest,
)
from stabilitygate.measure.onnx_export import is_valid_export
from stabilitygate.measure.onnx_trace import CHECK_TEXTS

TEXTS = [f"Answer {i}: Feynman was born in Queens, New York, in {1900 + i}." * (1 + i % 3) for i in range(12)]


def test_the_export_is_looked_for_under_the_prefix_or_the_mounted_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)
    assert export_dir() == Path(sys.prefix) / "share" / "stabilitygate" / "models" / "all-MiniLM-L6-v2"
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    assert export_dir() == tmp_path / "all-MiniLM-L6-v2"


def test_the_manifest_records_the_files_and_identifies_the_export() -> None:
    manifest = read_manifest(export_dir())
    assert [name for name, _, _ in manifest.files] == ["model.onnx", "model.onnx.data"]
    assert (manifest.dimension, manifest.max_seq_length) == (384, 256)
    assert len(manifest.identity) == 64
    data = json.loads((export_dir() / MANIFEST_NAME).read_text())
    assert data["dtype"] == "float64" and data["model"] == "all-MiniLM-L6-v2"


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
def test_an_unloadable_graph_is_a_clear_cannot_measure(tmp_path: Path) -> None:
    target = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(export_dir(), target)
    graph = target / "model.onnx"
    graph.write_bytes(b"\x08\x07 not a protobuf" * 100)
    # The manifest made to match the damaged file: onnxruntime itself must then refuse it.
    data = json.loads((target / MANIFEST_NAME).read_text())
    from stabilitygate.measure.onnx_backend import file_sha256

    data["files"]["model.onnx"] = {"bytes": graph.stat().st_size, "sha256": file_sha256(graph)}
    (target / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(CannotMeasure, match=r"is corrupt \(onnxruntime cannot load it") as caught:
        OnnxEncoder(read_manifest(target))
    assert caught.value.__cause__ is not None
    assert not is_valid_export(target)
    assert is_valid_export(export_dir())


@pytest.mark.slow
def test_a_wrong_probe_vector_is_caught(tmp_path: Path) -> None:
    target = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(export_dir(), target)
    data = json.loads((target / MANIFEST_NAME).read_text())
    data["probe"]["text"] = CHECK_TEXTS[2]  # another text's vector is not this one's
    (target / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(CannotMeasure, match="does not reproduce its own probe vector"):
        OnnxEncoder(read_manifest(target))
