"""The reference embedding backend: a local sentence-transformers model on torch, in float64, on the CPU.

It runs any `embedding.model` other than the default (which runs on its ONNX export) and is the
reference the export is checked against. Checking a model directory imports nothing heavy; torch and
sentence-transformers are imported only when the model loads, once per directory for the process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.model_files import DEFAULT_MODEL

_MODEL_DIR_MARKERS = ("modules.json", "config_sentence_transformers.json", "config.json")
_OTHER_MODEL_HINT = "pip install 'llm-stability-gate[semantic]' (sentence-transformers and torch)"
#: A loaded SentenceTransformer: a third-party object, untyped where its package is absent (the default set-up).
Model: TypeAlias = Any


def sentence_transformers_dir(model: str) -> Path:
    """The directory of a non-default model, checked as far as can be done without importing torch."""
    path = Path(model).expanduser()
    if not path.is_dir():
        raise BadInput(
            f"embedding model {model!r} is not a local directory: models are never downloaded, so use "
            f"{DEFAULT_MODEL} or mount a sentence-transformers model directory and give its path"
        )
    if not any((path / name).is_file() for name in _MODEL_DIR_MARKERS):
        raise BadInput(
            f"embedding model {model!r} is not a sentence-transformers model directory (it has none of "
            f"{', '.join(_MODEL_DIR_MARKERS)})"
        )
    if importlib.util.find_spec("sentence_transformers") is None:
        raise BadInput(
            f"embedding model {model!r} needs sentence-transformers, which is not installed: {_OTHER_MODEL_HINT}"
        )
    return path.resolve()


@lru_cache(maxsize=8)
def _files_hash(path: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _size, _mtime in signature:
        digest.update(name.encode() + b"\0")
        with open(path / name, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def model_files_hash(path: Path) -> str:
    """sha256 over every file of the model directory (memoised while the files do not change)."""
    files = sorted(p for p in path.rglob("*") if p.is_file() and ".git" not in p.relative_to(path).parts)
    signature = tuple((p.relative_to(path).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _files_hash(path, signature)


def _read_json(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def max_seq_length(name: str, path: Path) -> int:
    """The model's input limit in word pieces: from its config when stated there, else from the loaded model."""
    limit = _read_json(path / "sentence_bert_config.json").get("max_seq_length")
    if not isinstance(limit, int):
        limit = int(shared_model(name, path).max_seq_length)
    return limit


def word_piece_counter(name: str, path: Path) -> Callable[[str], int]:
    """Counts a text's word pieces with the loaded model's own tokenizer (for a model without tokenizer.json)."""
    model = shared_model(name, path)
    return lambda text: len(model.tokenizer(text, truncation=False)["input_ids"])


class SentenceTransformersBackend:
    """A sentence-transformers model in float64 on the CPU (the reference, and any non-default model)."""

    def __init__(self, model: Model) -> None:
        self._model = model

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        import torch

        with _RUN_LOCK, torch.inference_mode():
            out = self._model.encode(
                list(texts),
                batch_size=batch_size,
                convert_to_tensor=True,
                show_progress_bar=False,
                normalize_embeddings=False,
            )
        return np.asarray(out.to(torch.float64).cpu().numpy(), dtype=np.float64)


_MODELS: dict[Path, Model] = {}
_MODELS_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()  # embedders may share one torch model: one forward pass at a time


def shared_model(name: str, path: Path) -> Model:
    """One loaded copy per model directory for the whole process (it is only read, never trained)."""
    with _MODELS_LOCK:
        if path not in _MODELS:
            _MODELS[path] = _load_model(name, path)
        return _MODELS[path]


def _load_model(name: str, path: Path) -> Model:
    try:
        return load_float64(path)
    except ImportError as exc:
        raise BadInput(
            f"embedding model {name!r} needs {exc.name}, which is not installed: {_OTHER_MODEL_HINT}"
        ) from exc
    except Exception as exc:  # any failure to load is the same thing to the user: no semantic numbers
        raise CannotMeasure(f"cannot load the embedding model {name}: {exc}") from exc


def load_float64(path: Path) -> Model:
    """A local sentence-transformers model in float64 on the CPU, as the reference runs it.

    Never the hub: the model is a local directory and is opened with `local_files_only`; nothing
    process-wide is changed. ImportError names a missing package for the caller to word.
    """
    import torch
    from sentence_transformers import SentenceTransformer

    transformers_logging = importlib.import_module("transformers.utils.logging")
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    model.to(torch.float64)
    model.eval()
    return model
