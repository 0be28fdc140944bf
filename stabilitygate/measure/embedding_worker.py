"""The embedder's background thread: the model load first, then prefetched texts, in order.

A run starts the load before sampling and hands completions over as they arrive, so the load and the
forward passes overlap the requests. Errors of the thread are kept for whoever waits on its work and
raised there, in the caller's thread, chained to the original.
"""

from __future__ import annotations

import atexit
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

from stabilitygate.errors import BadInput, CannotMeasure, GateError

T = TypeVar("T")

THREAD_NAME = "stabilitygate-embedder"
_EXIT_WAIT_S = 60.0  # the longest a forward pass may keep the process from exiting


class Worker:
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
                self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
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


_WORKERS: weakref.WeakSet[Worker] = weakref.WeakSet()


@atexit.register
def _stop_workers() -> None:
    for worker in list(_WORKERS):
        worker.stop()


def resurfaced(exc: BaseException) -> GateError:
    """The loading thread's error as one to raise in the caller's thread (chained to the original)."""
    if isinstance(exc, BadInput):
        return BadInput(str(exc))
    if isinstance(exc, GateError):
        return type(exc)(str(exc))
    return CannotMeasure(f"the embedding model could not be loaded: {exc}")


class BackgroundLoad(Generic[T]):
    """A load that runs once, on the worker; whoever needs its result waits for it.

    The load function is passed on each call rather than kept, so this object never holds its owner.
    """

    def __init__(self, worker: Worker) -> None:
        self._worker = worker
        self._loading: Future[T] | None = None
        self._lock = threading.Lock()  # never held for long: prefetch() runs on the event loop

    @property
    def started(self) -> bool:
        return self._loading is not None

    def start(self, load: Callable[[], T]) -> Future[T]:
        """Queue the load unless it is queued already; its future either way."""
        with self._lock:
            if self._loading is None:
                loading: Future[T] = Future()
                loading.set_running_or_notify_cancel()
                self._loading = loading
                self._worker.submit(lambda: _load_into(loading, load))
            return self._loading

    def result(self, load: Callable[[], T]) -> T:
        """The loaded thing, starting the load or waiting for the worker as needed."""
        loading = self.start(load)
        try:
            return loading.result()
        except Exception as exc:
            raise resurfaced(exc) from exc


def _load_into(loading: Future[T], load: Callable[[], T]) -> None:
    try:
        loading.set_result(load())
    except BaseException as exc:  # handed to whoever waits on the load
        loading.set_exception(exc)


class Prefetch:
    """Texts handed over for the worker to embed; those handed over while it is busy go as one batch."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._drain_scheduled = False

    def add(self, texts: list[str], embed: Callable[[list[str]], object]) -> None:
        """Queue the texts for `embed` on the worker and return at once (errors are `embed`'s to raise later)."""
        if not texts:
            return
        with self._lock:
            self._pending.extend(texts)
            if self._drain_scheduled:
                return
            self._drain_scheduled = True
        self._worker.submit(lambda: self._drain(embed))

    def _drain(self, embed: Callable[[list[str]], object]) -> None:
        with self._lock:
            batch, self._pending = self._pending, []
            self._drain_scheduled = False
        try:
            embed(batch)
        except Exception:  # the embed() that needs these vectors raises it again
            return
