"""The batching engine behind the `local` provider: one model, one worker thread, dynamic batches.

It generates the way a serving engine does. Requests from every case arrive through
`Engine.generate`; one worker thread takes whatever is pending (up to `max_batch`) as one
left-padded batch and decodes it token by token (`local_decode`). A case's samples therefore share
batches with other cases' requests at varying batch sizes, which changes the padded shapes and so
the float reduction order: exactly the server-side effect the gate measures.

The model is loaded (once per process, `local_model`) by the worker on the first request;
`acquire_engine` shares one engine per model between all providers so that their requests are
batched together.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.providers.interface import FatalProviderError, ProviderError
from stabilitygate.providers.local_decode import BatchJob, GenerationResult, GenerationSpec, decode_batch
from stabilitygate.providers.local_model import LoadedModel, ModelSource, load_model

# Runs one batch: (model, jobs, "is the engine stopping?") -> one outcome per job.
Decode = Callable[[LoadedModel, Sequence[BatchJob], Callable[[], bool]], list[GenerationResult | ProviderError]]


@dataclass(eq=False)
class _Job:
    spec: GenerationSpec
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[GenerationResult]
    cancelled: bool = False  # set by the awaiting coroutine; read by the worker (a plain flag under the GIL)


class Engine:
    """One worker thread generating for one model; `generate` may be awaited from any event loop.

    `decode` runs each batch the worker takes; tests wrap it (before the first request) to hold the
    worker inside a batch until they have queued the requests whose batching they assert.
    """

    def __init__(self, source: ModelSource, *, decode: Decode = decode_batch) -> None:
        self.source = source
        self.decode = decode
        self.batch_sizes: list[int] = []  # every batch run, in order (for tests, the bench and diagnostics)
        self._pending: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._load_error: FatalProviderError | None = None

    async def generate(self, spec: GenerationSpec) -> GenerationResult:
        loop = asyncio.get_running_loop()
        job = _Job(spec, loop, loop.create_future())
        with self._cond:
            if self._stopping:
                raise ProviderError("the local engine is closed", retryable=False, kind="closed")
            if self._load_error is not None:
                raise FatalProviderError(str(self._load_error), kind="local_model")
            self._pending.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stabilitygate-local", daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            return await job.future
        except asyncio.CancelledError:
            job.cancelled = True  # the worker drops it from the queue or from its running batch
            raise

    @property
    def pending(self) -> int:
        """Requests waiting for a batch (cancelled ones not counted)."""
        with self._cond:
            return sum(not job.cancelled for job in self._pending)

    async def aclose(self) -> None:
        """Stop the worker: pending requests fail with kind "closed"; a running batch stops at its next token."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    leftover = list(self._pending)
                    self._pending.clear()
                    break
            try:
                loaded = load_model(self.source)
            except FatalProviderError as exc:  # no request can be served: fail them all, now and later
                message = str(exc)
                with self._cond:
                    self._load_error = FatalProviderError(message, kind="local_model")
                    leftover = list(self._pending)
                    self._pending.clear()
                for job in leftover:
                    _deliver(job, FatalProviderError(message, kind="local_model"))
                return
            batch = self._take_batch()
            if batch:
                self.batch_sizes.append(len(batch))
                self._run_batch(loaded, batch)
        for job in leftover:
            _deliver(job, ProviderError("the local engine is closed", retryable=False, kind="closed"))

    def _take_batch(self) -> list[_Job]:
        """The oldest pending requests, as many as the smallest max_batch among them allows."""
        batch: list[_Job] = []
        limit = 1 << 30
        with self._cond:
            while self._pending:
                job = self._pending[0]
                if job.cancelled:
                    self._pending.popleft()
                    continue
                if len(batch) >= min(limit, job.spec.max_batch):
                    break
                batch.append(self._pending.popleft())
                limit = min(limit, job.spec.max_batch)
        return batch

    def _run_batch(self, loaded: LoadedModel, batch: Sequence[_Job]) -> None:
        outcomes: list[GenerationResult | ProviderError]
        try:
            outcomes = self.decode(loaded, batch, lambda: self._stopping)
        except Exception as exc:  # a torch failure fails this batch's requests, not the worker
            message = f"local generation failed: {type(exc).__name__}: {exc}"
            outcomes = [ProviderError(message, retryable=False, kind="local_error") for _ in batch]
        for job, outcome in zip(batch, outcomes, strict=True):
            _deliver(job, outcome)


def _deliver(job: _Job, outcome: GenerationResult | ProviderError) -> None:
    def settle() -> None:
        if job.future.done():
            return
        if isinstance(outcome, ProviderError):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)

    # RuntimeError: that event loop is closed, so nobody is waiting for the answer any more.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(settle)


_ENGINES: dict[Path, tuple[Engine, int]] = {}
_ENGINES_LOCK = threading.Lock()


def acquire_engine(source: ModelSource) -> Engine:
    """The process's shared engine for this model (one per model file), counted until released."""
    with _ENGINES_LOCK:
        engine, users = _ENGINES.get(source.path, (None, 0))
        if engine is None:
            engine = Engine(source)
        _ENGINES[source.path] = (engine, users + 1)
        return engine


async def release_engine(engine: Engine) -> None:
    """Give back an engine from `acquire_engine`; the last user's release stops its worker."""
    with _ENGINES_LOCK:
        current, users = _ENGINES.get(engine.source.path, (None, 0))
        if current is not engine:
            return
        if users > 1:
            _ENGINES[engine.source.path] = (engine, users - 1)
            return
        del _ENGINES[engine.source.path]
    await engine.aclose()
