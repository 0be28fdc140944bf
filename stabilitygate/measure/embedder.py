"""The Embedder: texts in, deterministic vectors out, each distinct text through the model once.

It picks the backend, keeps the vectors in memory and in the disk cache (measure/embedding_cache.py),
and counts what it did. Importing this module is cheap, and so is constructing an Embedder: the model
runtime loads in `start_loading()`'s worker thread (measure/embedding_worker.py; a run calls it before
sampling, so the load overlaps the requests) or on the first `embed`. The default model,
all-MiniLM-L6-v2, runs on onnxruntime from its ONNX export (measure/onnx_backend.py): no torch. Every
other `embedding.model` is a local sentence-transformers directory and runs on sentence-transformers
and torch, the reference backend (measure/sentence_transformers_backend.py).

Determinism: a float32 forward pass gives a text a slightly different vector (~1e-7) depending on what
else shares its batch and how many threads run it, and that noise is enough to flip the sixth decimal of
a reported cosine. Both backends therefore compute in float64, where the same noise is ~1e-16, and the
result is rounded to float32: a text's vector is, in practice, a function of the text alone, whatever
batch size, batch companions, thread count, cache state or backend produced it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.embedding_cache import EmbeddingCache, model_key, resolve_cache_dir
from stabilitygate.measure.embedding_worker import LOAD_WAIT_S, BackgroundLoad, Prefetch, Worker
from stabilitygate.measure.export_manifest import ExportManifest, read_manifest
from stabilitygate.measure.model_files import DEFAULT_MODEL
from stabilitygate.measure.onnx_backend import OnnxEncoder, export_dir, load_tokenizer
from stabilitygate.measure.semantic import unit_rows
from stabilitygate.measure.sentence_transformers_backend import (
    SentenceTransformersBackend,
    max_seq_length,
    model_files_hash,
    sentence_transformers_dir,
    shared_model,
    word_piece_counter,
)
from stabilitygate.plain import round_float
from stabilitygate.results import EmbeddingFacts

_DEFAULT_ALIASES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_CHUNK = 1024  # texts per call into the model, so the cache keeps what an interrupted run computed


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


class _Backend(Protocol):
    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray: ...


class Embedder:
    """Embeds texts with the default model's ONNX export or a local sentence-transformers model.

    Each distinct text goes through the model once per process; vectors also persist in the disk cache.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = 32,
        cache_dir: str | None = None,
        wait_s: float = LOAD_WAIT_S,
    ) -> None:
        if batch_size < 1:
            raise BadInput(f"embedding batch_size must be at least 1, not {batch_size}")
        self.model_name = model
        self._export: ExportManifest | None = None
        if model in _DEFAULT_ALIASES:
            self._export = read_manifest(export_dir())
        # The model's directory: the ONNX export for the default model.
        self.model_path = self._export.directory if self._export else sentence_transformers_dir(model)
        self.batch_size = batch_size
        self._cache_root = resolve_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._memory: dict[str, np.ndarray] = {}
        self._tokenizer: Callable[[str], int] | None = None
        self._max_word_pieces: int | None = None
        self._lock = threading.RLock()  # the memory, the counters, the model calls
        self._wait_s = wait_s  # the longest any caller waits for the lock or the load
        self._tokenizer_lock = threading.Lock()
        worker = Worker()
        self._loading: BackgroundLoad[_Backend] = BackgroundLoad(worker, wait_s=wait_s)
        self._prefetch = Prefetch(worker)
        self._texts_embedded = 0
        self._texts_from_cache = 0
        self._seconds_in_model = 0.0

    # -- properties ------------------------------------------------------------------------------------

    @property
    def backend(self) -> str:
        return "onnxruntime" if self._export is not None else "sentence-transformers"

    @property
    def texts_embedded(self) -> int:
        """Texts actually run through the model (cache hits are not counted)."""
        return self._texts_embedded

    @property
    def texts_from_cache(self) -> int:
        """Distinct texts whose vectors came from the disk cache (for the job summary, never the report)."""
        return self._texts_from_cache

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
    def loading_started(self) -> bool:
        """Whether the model has begun loading (False all run long when the cache had every vector)."""
        return self._loading.started

    @property
    def max_word_pieces(self) -> int:
        """The model's input limit in word pieces ([CLS] and [SEP] included); longer texts are truncated."""
        if self._max_word_pieces is None:
            if self._export is not None:
                self._max_word_pieces = self._export.max_seq_length
            else:
                self._max_word_pieces = max_seq_length(self.model_name, self.model_path)
        return self._max_word_pieces

    # -- loading ---------------------------------------------------------------------------------------

    def start_loading(self) -> None:
        """Start loading the model in a worker thread and return at once.

        Does nothing when the disk cache already holds vectors of this model: a stable suite then
        loads no model at all, and a text the cache lacks loads it on demand, in whichever thread needs
        it first (a prefetch on the worker, or the measuring thread).
        """
        cache = self._disk_cache()
        if cache is not None and cache.has_entries():
            return
        self._loading.start(self._load_backend)

    def prefetch(self, texts: Iterable[str]) -> None:
        """Have the worker thread embed these texts (loading the model first if nobody has) and return at once.

        A run hands completions over as they arrive (one at a time is fine: texts handed over while the
        worker is busy are embedded together, as one batch), so their vectors are ready when measuring
        asks for them. Texts the cache holds load no model. Errors are not raised here but by the
        `embed` that needs the vectors.
        """
        self._prefetch.add(list(texts), self.embed)

    def _load_backend(self) -> _Backend:
        if self._export is not None:
            return _shared_encoder(self._export)
        return SentenceTransformersBackend(shared_model(self.model_name, self.model_path))

    # -- word pieces -----------------------------------------------------------------------------------

    def word_pieces(self, text: str) -> int:
        """Length of the text in the model's word pieces, as the model counts them ([CLS] and [SEP] included)."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            return self._tokenizer(_model_text(text))

    def _load_tokenizer(self) -> Callable[[str], int]:
        tokenizer_file = self.model_path / "tokenizer.json"
        if tokenizer_file.is_file():
            # The `tokenizers` library reads the model's own tokenizer without importing torch.
            fast = load_tokenizer(tokenizer_file, max_length=None)
            return lambda text: len(fast.encode(text).ids)
        return word_piece_counter(self.model_name, self.model_path)

    # -- embedding -------------------------------------------------------------------------------------

    def _disk_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            identity = self._export.identity if self._export is not None else model_files_hash(self.model_path)
            self._cache = EmbeddingCache(self._cache_root, model_key(self.model_name, identity))
        return self._cache

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per input text, in input order."""
        texts = list(texts)
        with self._locked():
            missing = sorted({t for t in texts if t not in self._memory})
            cache = self._disk_cache() if missing else None
            if cache is not None:
                found = cache.get_many(missing)
                self._memory.update(found)
                self._texts_from_cache += len(found)
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

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The embedder's lock, waited for at most `wait_s` (another thread may be in a long forward pass)."""
        if not self._lock.acquire(timeout=self._wait_s):
            raise CannotMeasure(f"waited {self._wait_s:g} s for the embedding model to finish other texts")
        try:
            yield
        finally:
            self._lock.release()

    def _dimension(self) -> int:
        if self._memory:
            return int(next(iter(self._memory.values())).shape[0])
        return self._export.dimension if self._export is not None else 0

    def _run_model(self, texts: list[str]) -> dict[str, np.ndarray]:
        backend = self._loading.result(self._load_backend)  # loads here, or waits for the thread loading it
        started = time.perf_counter()
        out = backend.encode([_model_text(t) for t in texts], self.batch_size)
        rows = unit_rows(out).astype(np.float32)
        self._seconds_in_model += time.perf_counter() - started
        return {text: rows[i] for i, text in enumerate(texts)}


_ENCODERS: dict[Path, OnnxEncoder] = {}
_ENCODERS_LOCK = threading.Lock()


def _shared_encoder(export: ExportManifest) -> OnnxEncoder:
    """One onnxruntime session per export directory for the whole process."""
    with _ENCODERS_LOCK:
        if export.directory not in _ENCODERS:
            _ENCODERS[export.directory] = OnnxEncoder(export)
        return _ENCODERS[export.directory]


def similarity(embedder: TextEmbedder, a: str, b: str) -> float:
    """Cosine of two texts, rounded as reports round it; identical texts are 1.0 (the judge's drift check)."""
    if a == b:
        return 1.0
    rows = unit_rows(embedder.embed([a, b]))
    return round_float(float(np.clip(rows[0] @ rows[1], -1.0, 1.0)))


def embedding_info(embedder: Embedder | None) -> EmbeddingFacts:
    """The report's description of the semantic layer (the same whether vectors came from the cache or not)."""
    if embedder is None:
        return EmbeddingFacts(truncation="semantic layer off")
    limit = embedder.max_word_pieces
    return EmbeddingFacts(
        model=embedder.model_name,
        texts_embedded=embedder.distinct_texts,
        max_word_pieces=limit,
        truncation=(
            f"texts longer than {limit} word pieces are truncated: their semantic numbers cover only the first {limit}"
        ),
        texts_from_cache=embedder.texts_from_cache,
    )
