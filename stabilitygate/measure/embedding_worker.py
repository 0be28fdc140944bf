"""The embedder's background thread: the model load (when a run starts it), then prefetched texts, in order.

A run starts the load before sampling and hands completions over as they arrive, so the load and the
forward passes overlap the requests. No wait here can deadlock: a job never waits for work queued behind
itself (`BackgroundLoad.result` loads in place when nobody has begun), and every wait has a bound past
which the run cannot measure (exit 3). Errors of the thread are kept for whoever waits on its work and
raised there, in the caller's thread, chained to the original.
"""

from __future__ import annotations

import atexit
import queue
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Generic, TypeVar

from stabilitygate.errors import BadInput, CannotMeasure, GateError

T = TypeVar("T")

THREAD_NAME = "stabilitygate-embedder"
_EXIT_WAIT_S = 60.0  # the longest a forward pass may keep the process from exiting
#: The longest anyone waits for a model load that another thread is running (docs/design.md §14).
LOAD_WAIT_S = 600.0


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
    """A load that runs once, in whichever thread first needs it; everyone else waits, for a bounded time.

    `start` queues the load on the worker. `result` runs it in place when nobody has claimed it yet,
    even when a queued start job is still waiting for its turn: the worker may be busy with a job that
    itself needs the load, and waiting for work queued behind oneself never ends (docs/design.md §14,
    "Cold start"). So the only waits are on a load that is actually running, and they are bounded.
    The load function is passed on each call rather than kept, so this object never holds its owner.
    """

    def __init__(self, worker: Worker, *, wait_s: float = LOAD_WAIT_S) -> None:
        self._worker = worker
        self._wait_s = wait_s
        self._loading: Future[T] = Future()
        self._queued = False
        self._claimed = False
        self._lock = threading.Lock()  # never held for long: prefetch() runs on the event loop

    @property
    def started(self) -> bool:
        return self._queued or self._claimed

    def start(self, load: Callable[[], T]) -> None:
        """Queue the load on the worker unless it is queued, running or done already."""
        with self._lock:
            if self._queued or self._claimed:
                return
            self._queued = True
        self._worker.submit(lambda: self._run_if_unclaimed(load))

    def result(self, load: Callable[[], T]) -> T:
        """The loaded thing: loaded here when nobody has begun, else awaited (at most `wait_s`)."""
        if self._claim():
            _load_into(self._loading, load)
        try:
            return self._loading.result(timeout=self._wait_s)
        except FutureTimeout as exc:
            raise CannotMeasure(
                f"waited {self._wait_s:g} s for the embedding model to load, and it has not finished"
            ) from exc
        except Exception as exc:
            raise resurfaced(exc) from exc

    def _claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def _run_if_unclaimed(self, load: Callable[[], T]) -> None:
        if self._claim():
            _load_into(self._loading, load)


def _load_into(loading: Future[T], load: Callable[[], T]) -> None:
    loading.set_running_or_notify_cancel()
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
