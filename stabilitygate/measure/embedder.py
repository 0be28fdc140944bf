"""The offline embedding model behind the semantic numbers: background loading, caching, deterministic vectors.

Importing this module is cheap, and so is constructing an Embedder: the model runtime loads in
`start_loading()`'s worker thread (a run calls it before sampling, so the load overlaps the requests) or
on the first `embed`. The default model, all-MiniLM-L6-v2, runs on onnxruntime from its ONNX export
(stabilitygate.measure.onnx_backend): no torch. Any other `embedding.model` is a local
sentence-transformers directory and runs on sentence-transformers and torch, the reference backend.

Determinism: a float32 forward pass gives a text a slightly different vector (~1e-7) depending on what
else shares its batch and how many threads run it, and that noise is enough to flip the sixth decimal of
a reported cosine. Both backends therefore compute in float64, where the same noise is ~1e-16, and the
result is rounded to float32: a text's vector is, in practice, a function of the text alone, whatever
batch size, batch companions, thread count, cache state or backend produced it.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from stabilitygate.errors import BadInput, CannotMeasure, GateError
from stabilitygate.measure.agreement import round_report
from stabilitygate.measure.embedding_cache import EmbeddingCache, model_key, resolve_cache_dir
from stabilitygate.measure.onnx_backend import DEFAULT_MODEL, ExportManifest, OnnxEncoder, export_dir, read_manifest
from stabilitygate.measure.semantic import unit_rows

_DEFAULT_ALIASES = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_CHUNK = 1024  # texts per call into the model, so the cache keeps what an interrupted run computed
_MODEL_DIR_MARKERS = ("modules.json", "config_sentence_transformers.json", "config.json")
_OTHER_MODEL_HINT = "pip install 'llm-stability-gate[semantic]' (sentence-transformers and torch)"


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


def _sentence_transformers_dir(model: str) -> Path:
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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _resurfaced(exc: BaseException) -> GateError:
    """The loading thread's error as one to raise in the caller's thread (chained to the original)."""
    if isinstance(exc, BadInput):
        return BadInput(str(exc))
    if isinstance(exc, GateError):
        return type(exc)(str(exc))
    return CannotMeasure(f"the embedding model could not be loaded: {exc}")


class _Worker:
    """A daemon thread that runs jobs in order (the load first, then any prefetches) and ends when idle.

    At exit, queued jobs are dropped and the running one is waited for: the interpreter must not tear
    the model down under a forward pass.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closing = False

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._closing:
                return
            self._jobs.put(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stabilitygate-embedder", daemon=True)
                self._thread.start()
                _WORKERS.add(self)

    def stop(self) -> None:
        with self._lock:
            self._closing = True
            thread = self._thread
        if thread is not None:
            thread.join(timeout=_EXIT_WAIT_S)

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closing or self._jobs.empty():
                    self._thread = None
                    return
                job = self._jobs.get_nowait()
            job()


_WORKERS: weakref.WeakSet[_Worker] = weakref.WeakSet()
_EXIT_WAIT_S = 60.0  # the longest a forward pass may keep the process from exiting


@atexit.register
def _stop_workers() -> None:
    for worker in list(_WORKERS):
        worker.stop()


class Embedder:
    """Embeds texts with the default model's ONNX export or a local sentence-transformers model.

    Each distinct text goes through the model once per process; vectors also persist in the disk cache.
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 32, cache_dir: str | None = None) -> None:
        if batch_size < 1:
            raise BadInput(f"embedding batch_size must be at least 1, not {batch_size}")
        self._name = model
        self._export: ExportManifest | None = None
        if model in _DEFAULT_ALIASES:
            self._export = read_manifest(export_dir())
            self._path = self._export.directory
        else:
            self._path = _sentence_transformers_dir(model)
        self.batch_size = batch_size
        self._cache_root = resolve_cache_dir(cache_dir)
        self._cache: EmbeddingCache | None = None
        self._memory: dict[str, np.ndarray] = {}
        self._loading: Future[_Backend] | None = None
        self._tokenizer: Callable[[str], int] | None = None
        self._max_word_pieces: int | None = None
        self._lock = threading.RLock()  # the memory, the counters, the model calls
        self._load_lock = threading.Lock()  # never held for long: prefetch() runs on the event loop
        self._tokenizer_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[str] = []
        self._drain_scheduled = False
        self._worker = _Worker()
        self._texts_embedded = 0
        self._texts_from_cache = 0
        self._seconds_in_model = 0.0

    # -- properties ------------------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def model_path(self) -> Path:
        """The model's directory: the ONNX export for the default model."""
        return self._path

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
        return self._loading is not None

    @property
    def max_word_pieces(self) -> int:
        """The model's input limit in word pieces ([CLS] and [SEP] included); longer texts are truncated."""
        if self._max_word_pieces is None:
            if self._export is not None:
                self._max_word_pieces = self._export.max_seq_length
            else:
                limit = _read_json(self._path / "sentence_bert_config.json").get("max_seq_length")
                if not isinstance(limit, int):
                    limit = int(_shared_model(self._name, self._path).max_seq_length)
                self._max_word_pieces = limit
        return self._max_word_pieces

    # -- loading ---------------------------------------------------------------------------------------

    def start_loading(self) -> None:
        """Start loading the model in a worker thread and return at once.

        Does nothing when the disk cache already holds vectors of this model: a stable suite then
        loads no model at all, and a text the cache lacks loads it on demand.
        """
        cache = self._disk_cache()
        if cache is not None and cache.has_entries():
            return
        self._begin_loading()

    def prefetch(self, texts: Iterable[str]) -> None:
        """Have the worker thread embed these texts, after the load, and return at once.

        A run hands completions over as they arrive (one at a time is fine: texts handed over while the
        worker is busy are embedded together, as one batch), so their vectors are ready when measuring
        asks for them. Texts the cache holds load no model. Errors are not raised here but by the
        `embed` that needs the vectors.
        """
        batch = list(texts)
        if not batch:
            return
        with self._pending_lock:
            self._pending.extend(batch)
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        self._worker.submit(self._drain_pending)

    def _drain_pending(self) -> None:
        with self._pending_lock:
            batch, self._pending = self._pending, []
            self._drain_scheduled = False
        try:
            self.embed(batch)
        except Exception:  # the embed() that needs these vectors raises it again
            return

    def _begin_loading(self) -> Future[_Backend]:
        with self._load_lock:
            if self._loading is None:
                loading: Future[_Backend] = Future()
                loading.set_running_or_notify_cancel()
                self._loading = loading
                self._worker.submit(lambda: self._load_into(loading))
            return self._loading

    def _load_into(self, loading: Future[_Backend]) -> None:
        try:
            loading.set_result(self._load_backend())
        except BaseException as exc:  # handed to whoever waits on the load
            loading.set_exception(exc)

    def _load_backend(self) -> _Backend:
        if self._export is not None:
            return _shared_encoder(self._export)
        return _SentenceTransformersBackend(_shared_model(self._name, self._path))

    def _backend(self) -> _Backend:
        """The loaded model, waiting for the worker thread if it is still loading."""
        loading = self._begin_loading()
        try:
            return loading.result()
        except Exception as exc:
            raise _resurfaced(exc) from exc

    # -- word pieces -----------------------------------------------------------------------------------

    def word_pieces(self, text: str) -> int:
        """Length of the text in the model's word pieces, as the model counts them ([CLS] and [SEP] included)."""
        with self._tokenizer_lock:
            if self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
            return self._tokenizer(_model_text(text))

    def _load_tokenizer(self) -> Callable[[str], int]:
        tokenizer_file = self._path / "tokenizer.json"
        if tokenizer_file.is_file():
            # The `tokenizers` library reads the model's own tokenizer without importing torch.
            from stabilitygate.measure.onnx_backend import load_tokenizer

            fast = load_tokenizer(tokenizer_file, max_length=None)
            return lambda text: len(fast.encode(text).ids)
        model = _shared_model(self._name, self._path)
        return lambda text: len(model.tokenizer(text, truncation=False)["input_ids"])

    # -- embedding -------------------------------------------------------------------------------------

    def _disk_cache(self) -> EmbeddingCache | None:
        if self._cache is None and self._cache_root is not None:
            identity = self._export.identity if self._export is not None else model_files_hash(self._path)
            self._cache = EmbeddingCache(self._cache_root, model_key(self._name, identity))
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

    def _dimension(self) -> int:
        if self._memory:
            return int(next(iter(self._memory.values())).shape[0])
        return self._export.dimension if self._export is not None else 0

    def _run_model(self, texts: list[str]) -> dict[str, np.ndarray]:
        backend = self._backend()
        started = time.perf_counter()
        out = backend.encode([_model_text(t) for t in texts], self.batch_size)
        rows = unit_rows(out).astype(np.float32)
        self._seconds_in_model += time.perf_counter() - started
        return {text: rows[i] for i, text in enumerate(texts)}


class _SentenceTransformersBackend:
    """A sentence-transformers model in float64 on the CPU (the reference, and any non-default model)."""

    def __init__(self, model: Any) -> None:
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


_MODELS: dict[Path, Any] = {}
_ENCODERS: dict[Path, OnnxEncoder] = {}
_MODELS_LOCK = threading.Lock()
_RUN_LOCK = threading.Lock()  # embedders may share one torch model: one forward pass at a time


def _shared_encoder(export: ExportManifest) -> OnnxEncoder:
    """One onnxruntime session per export directory for the whole process."""
    with _MODELS_LOCK:
        if export.directory not in _ENCODERS:
            _ENCODERS[export.directory] = OnnxEncoder(export)
        return _ENCODERS[export.directory]


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
        raise BadInput(
            f"embedding model {name!r} needs {exc.name}, which is not installed: {_OTHER_MODEL_HINT}"
        ) from exc
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    transformers_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    except Exception as exc:  # any failure to load is the same thing to the user: no semantic numbers
        raise CannotMeasure(f"cannot load the embedding model {name}: {exc}") from exc
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
    """The report's description of the semantic layer (the same whether vectors came from the cache or not)."""
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
