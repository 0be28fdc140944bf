"""Tracing the float64 reference model into one ONNX graph, and checking the graph against it.

sentence-transformers loads the model in float64, as the reference backend runs it, and the whole
model (transformer, mean pooling, normalisation) is traced into one graph, so the runtime needs only
onnxruntime and tokenizers. The weights, float32 numbers to begin with, are stored in float32 and cast
in the graph (half the size; the cast is exact). The written graph must then reproduce the untouched
torch model on CHECK_TEXTS, in one batch and one text at a time. torch, sentence-transformers and onnx
are imported inside the functions: only the exporter needs them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import (
    DATA_NAME,
    DEFAULT_MODEL,
    INPUT_NAMES,
    ONNX_NAME,
    OnnxEncoder,
    read_manifest,
)

OPSET = 17
# Texts the export must reproduce: short, past 256 word pieces, non-ASCII, empty, padded in one batch.
CHECK_TEXTS = (
    "Richard Feynman was born in Queens, New York, in 1918.",
    "The borough of Queens is large. " * 60,
    "naïve café — ünïcode, 日本語のテキスト, emoji 🙂",
    "",
    "  leading and trailing spaces  ",
)
PROBE_TEXT = CHECK_TEXTS[0]
_MIN_NARROWED = 1024  # smaller weights stay float64 in the graph itself
CHECK_TOLERANCE = 1e-12  # float64 against float64: anything larger is a wrong graph, not rounding


def load_reference(source: Path) -> Any:
    """The model exactly as the sentence-transformers backend runs it: float64, on the CPU, offline."""
    from stabilitygate.measure.sentence_transformers_backend import load_float64

    try:
        return load_float64(source)
    except ImportError as exc:
        raise CannotMeasure(
            f"exporting {DEFAULT_MODEL} needs {exc.name} (pip install 'llm-stability-gate[semantic,export]')"
        ) from exc


def reference_vectors(model: Any, texts: Sequence[str]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        out = model.encode(list(texts), batch_size=len(texts), convert_to_tensor=True, show_progress_bar=False)
    return np.asarray(out.to(torch.float64).cpu().numpy(), dtype=np.float64)


def export_graph(model: Any, target: Path) -> None:
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(
            self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
        ) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
            embedding: torch.Tensor = self.inner(features)["sentence_embedding"]
            return embedding

    # Two texts of different lengths: the traced graph then carries the padding mask.
    features = model.preprocess(["an example", "a longer example sentence for tracing"])
    example = tuple(features[name] for name in INPUT_NAMES)
    dynamic = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES}
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it treats as constants
        torch.onnx.export(
            SentenceEmbedding(model),
            example,
            str(target),
            input_names=list(INPUT_NAMES),
            output_names=["sentence_embedding"],
            dynamic_axes={**dynamic, "sentence_embedding": {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def store_weights_as_float32(graph_file: Path, directory: Path) -> None:
    """Rewrite the float64 graph so its weights are stored in float32 and cast to float64 where used.

    The weights are float32 numbers to begin with, so the cast is exact and the results are unchanged,
    but the files and the mapped memory are half the size. The weights go to an external data file,
    which onnxruntime maps rather than copies. An embedding table that is only gathered from is
    gathered in float32 and the rows cast, so the whole table is never converted.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(graph_file))
    graph = model.graph
    uses: dict[str, list[tuple[Any, int]]] = {}
    for node in graph.node:
        for position, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, position))
    casts_first: list[Any] = []
    casts_after: dict[int, list[Any]] = {}
    initializers = []
    for tensor in graph.initializer:
        values = numpy_helper.to_array(tensor)
        narrow = values.astype(np.float32)
        exact = tensor.data_type == TensorProto.DOUBLE and np.array_equal(narrow.astype(np.float64), values)
        if not exact or values.size < _MIN_NARROWED:
            initializers.append(tensor)
            continue
        stored = f"{tensor.name}__float32"
        initializers.append(numpy_helper.from_array(narrow, stored))
        consumers = uses.get(tensor.name, [])
        if consumers and all(node.op_type == "Gather" and position == 0 for node, position in consumers):
            for node, _ in consumers:
                wide = node.output[0]
                node.input[0] = stored
                node.output[0] = f"{wide}__float32"
                cast = helper.make_node("Cast", [node.output[0]], [wide], to=TensorProto.DOUBLE)
                casts_after.setdefault(id(node), []).append(cast)
        else:
            casts_first.append(helper.make_node("Cast", [stored], [tensor.name], to=TensorProto.DOUBLE))
    nodes = list(casts_first)
    for node in graph.node:
        nodes.append(node)
        nodes.extend(casts_after.get(id(node), []))
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save_model(
        model, str(directory / ONNX_NAME), save_as_external_data=True, location=DATA_NAME, size_threshold=1024
    )


def check_against_reference(directory: Path, expected: np.ndarray) -> float:
    """The largest difference between the exported graph and torch on CHECK_TEXTS (raises past tolerance)."""
    encoder = OnnxEncoder(read_manifest(directory))
    worst = 0.0
    for batch_size in (1, len(CHECK_TEXTS)):
        got = encoder.encode(list(CHECK_TEXTS), batch_size)
        worst = max(worst, float(np.abs(got - expected).max()))
    if worst > CHECK_TOLERANCE:
        raise CannotMeasure(f"the ONNX export of {DEFAULT_MODEL} differs from torch by {worst:.3g}: not written")
    return worst
