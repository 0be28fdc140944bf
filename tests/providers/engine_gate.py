"""Holding the local engine's worker inside a batch, so that tests choose what queues behind it.

The gate wraps the engine's `decode`: each batch the worker takes waits at the gate until the test
opens it, and the test learns (without polling) that the batch was taken. Requests queued while the
worker is held are all pending when it comes back, so the next batch it takes is known in advance.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from stabilitygate.providers.interface import ProviderError
from stabilitygate.providers.local_decode import BatchJob, GenerationResult, decode_batch
from stabilitygate.providers.local_engine import Engine
from stabilitygate.providers.local_model import LoadedModel

# Only reached when the engine is broken: the test then fails on a wait that never ended, instead of hanging.
GUARD_S = 120


class BatchGate:
    """An engine's decode that holds each batch until `open()`; `await taken()` once per batch taken."""

    def __init__(self, engine: Engine) -> None:
        self._taken = threading.Semaphore(0)
        self._opened = threading.Event()
        engine.decode = self.decode  # before the first request: the worker reads it for every batch

    def decode(
        self, loaded: LoadedModel, batch: Sequence[BatchJob], stopping: Callable[[], bool]
    ) -> list[GenerationResult | ProviderError]:
        self._taken.release()
        if not self._opened.wait(GUARD_S):
            raise AssertionError("the test never opened the gate")
        return decode_batch(loaded, batch, stopping)

    async def taken(self) -> None:
        """Returns once the worker has taken its next batch (and is held in it unless the gate is open)."""
        if not await asyncio.to_thread(self._taken.acquire, timeout=GUARD_S):
            raise AssertionError("the worker took no batch")

    def open(self) -> None:
        """Let the held batch and every later one run."""
        self._opened.set()


async def queued(engine: Engine, requests: Sequence[Coroutine[Any, Any, Any]]) -> list[asyncio.Task[Any]]:
    """Start `requests` and return once every one of them waits in the engine's queue."""
    before = engine.pending
    tasks = [asyncio.create_task(request) for request in requests]
    await asyncio.sleep(0)  # each task runs to its first await, which comes after it joined the queue
    assert engine.pending == before + len(tasks), "a request did not queue"
    return tasks
