"""The default embedding model on onnxruntime: finding its export, checking it, running it.

This module never imports torch, transformers or sentence-transformers (the Action's image carries none
of them): onnxruntime, tokenizers and numpy are enough. The export itself is written by
`python -m stabilitygate.measure.onnx_export OUT_DIR` (see that module), where torch is installed.

Where the export is looked for: $STABILITYGATE_MODEL_DIR/all-MiniLM-L6-v2/ when that variable is set (a
mounted directory), else <sys.prefix>/share/stabilitygate/models/all-MiniLM-L6-v2/ (the image and
scripts/setup.sh put it there).

The graph computes in float64, as the torch reference does (see docs/design.md on determinism): a
text's vector then moves by ~1e-16 with its batch companions, far below the float32 rounding of the
result, so vectors are in practice a function of the text alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_DIR_ENV = "STABILITYGATE_MODEL_DIR"
MANIFEST_NAME = "stabilitygate-export.json"
ONNX_NAME = "model.onnx"
DATA_NAME = "model.onnx.data"  # the weights, which onnxruntime maps into memory
CHECKED_FILES = (ONNX_NAME, DATA_NAME)
TOKENIZER_NAME = "tokenizer.json"
EXPORT_FORMAT = 1
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# A self-check after loading: the probe's vector, computed by torch at export time, must come back.
PROBE_TOLERANCE = 1e-6
_HASH_CHUNK = 1 << 20
_SETUP_HINT = (
    "run scripts/setup.sh (or `python -m stabilitygate.measure.onnx_export DIR` where torch and "
    f"sentence-transformers are installed) or mount an export with ${MODEL_DIR_ENV}"
)


def export_dir(model: str = DEFAULT_MODEL) -> Path:
    """Where the export of `model` is looked for (it may not exist)."""
    mounted = os.environ.get(MODEL_DIR_ENV)
    root = Path(mounted).expanduser() if mounted else Path(sys.prefix) / "share" / "stabilitygate" / "models"
    return root / model


@dataclass(frozen=True)
class ExportManifest:
    """What the exporter recorded about an export (stabilitygate-export.json)."""

    directory: Path
    files: tuple[tuple[str, int, str], ...]  # (name, bytes, sha256) of the graph and its weights
    dimension: int
    max_seq_length: int
    probe_text: str
    probe_vector: tuple[float, ...]

    @property
    def onnx_path(self) -> Path:
        return self.directory / ONNX_NAME

    @property
    def tokenizer_path(self) -> Path:
        return self.directory / TOKENIZER_NAME

    @property
    def identity(self) -> str:
        """A hash of the exported files as recorded (the embedding cache's key: no file is read for it)."""
        digest = hashlib.sha256()
        for name, size, sha256 in self.files:
            digest.update(f"{name}\0{size}\0{sha256}\0".encode())
        return digest.hexdigest()


def _broken(directory: Path, what: str) -> CannotMeasure:
    return CannotMeasure(f"the ONNX export of {DEFAULT_MODEL} at {directory} is {what}: {_SETUP_HINT}")


def read_manifest(directory: Path) -> ExportManifest:
    """The export's manifest, checked for shape and for the files it names (cheap: no hashing)."""
    manifest = directory / MANIFEST_NAME
    if not manifest.is_file():
        raise _broken(directory, "missing")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data["format"] != EXPORT_FORMAT or data["model"] != DEFAULT_MODEL:
            raise ValueError(f"format {data['format']!r} of model {data['model']!r}")
        found = ExportManifest(
            directory=directory,
            files=tuple(
                (name, int(data["files"][name]["bytes"]), str(data["files"][name]["sha256"])) for name in CHECKED_FILES
            ),
            dimension=int(data["dimension"]),
            max_seq_length=int(data["max_seq_length"]),
            probe_text=str(data["probe"]["text"]),
            probe_vector=tuple(float(v) for v in data["probe"]["vector"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _broken(directory, f"corrupt (unreadable {MANIFEST_NAME}: {exc})") from exc
    for path in (*(directory / name for name in CHECKED_FILES), found.tokenizer_path):
        if not path.is_file():
            raise _broken(directory, f"corrupt ({path.name} is missing)")
    if len(found.probe_vector) != found.dimension:
        raise _broken(directory, "corrupt (its probe vector has the wrong length)")
    return found


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_files(manifest: ExportManifest) -> None:
    """The graph and its weights are the files the exporter wrote (size, then sha256)."""
    for name, size, sha256 in manifest.files:
        path = manifest.directory / name
        try:
            digest = file_sha256(path) if path.stat().st_size == size else None
        except OSError as exc:
            raise _broken(manifest.directory, f"corrupt ({name} is unreadable: {exc})") from exc
        if digest != sha256:
            raise _broken(manifest.directory, f"corrupt ({name} does not match its recorded sha256)")


def load_tokenizer(path: Path, *, max_length: int | None) -> Any:
    """A `tokenizers` Tokenizer: truncating to max_length word pieces, or not at all (for counting)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise CannotMeasure(f"the semantic layer needs the tokenizers package: {exc}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises a bare Exception for a malformed file
        raise _broken(path.parent, f"corrupt ({path.name} cannot be read: {exc})") from exc
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
    return tokenizer


class OnnxEncoder:
    """The exported model in an onnxruntime session: texts in, float64 sentence embeddings out."""

    def __init__(self, manifest: ExportManifest, *, threads: int | None = None) -> None:
        verify_files(manifest)
        self.manifest = manifest
        self._tokenizer = load_tokenizer(manifest.tokenizer_path, max_length=manifest.max_seq_length)
        self._session = _session(manifest, threads)
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
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=0.0, atol=PROBE_TOLERANCE):
            raise _broken(self.manifest.directory, "corrupt (it does not reproduce its own probe vector)")


def _session(manifest: ExportManifest, threads: int | None) -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise CannotMeasure(
            f"the semantic layer needs onnxruntime (pip install 'llm-stability-gate[onnx]'): {exc}"
        ) from exc
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: the gate's output is its own
    # The extended fusions (layer norm, attention) compute parts of the float64 graph at ~1e-8: basic only.
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.enable_mem_pattern = False  # planned buffers for the largest batch seen stay allocated: ~100 MB more
    if threads is not None:
        options.intra_op_num_threads = threads
    try:
        session = onnxruntime.InferenceSession(
            str(manifest.onnx_path),
            sess_options=options,
            providers=["CPUExecutionProvider"],
            # Folding would turn the float32-stored weights into float64 copies: twice the memory.
            disabled_optimizers=["ConstantFolding"],
        )
    except Exception as exc:  # onnxruntime's own exception types: any of them means the same thing
        raise _broken(manifest.directory, f"corrupt (onnxruntime cannot load it: {exc})") from exc
    names = tuple(i.name for i in session.get_inputs())
    if sorted(names) != sorted(INPUT_NAMES):
        raise _broken(manifest.directory, f"corrupt (its inputs are {names}, not {INPUT_NAMES})")
    return session
