"""An OpenAI-compatible server whose answers depend on how many requests it serves at once.

It stands in for a serving engine with parallel slots (llama.cpp's `llama-server -np 8`, vLLM's
continuous batching): requests that arrive together are computed as one batch, and a batch of
several requests computes each one a little differently from the same request alone. Measured on a
real llama-server (SmolLM2-135M, temperature 0): one prompt at a time always gave one completion,
mixed prompts batched at `-np 8` gave 2 distinct completions of 40.

The batching is counted, not timed, wherever it can be: a request joins the open batch and waits
until `slots` requests are in it, then the whole batch is answered. A request that no other joins
(the only one in flight, as with a client at concurrency 1) waits `gather_s` for company and is
then answered alone. A request answered alone gets its prompt's `alone` text; the request at
position i (0-based) of a batch of two or more gets its prompt's `batched[i % len(batched)]`.

Python use::

    from tests.support.batching_server import BatchingOpenAI

    with BatchingOpenAI({"2 + 2?": ("4", ["4", "4.", "four", "Four."])}, slots=5) as server:
        server.base_url    # "http://127.0.0.1:PORT/v1"
        server.batches     # the size of every batch answered, in order
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.openai_server import ScriptedOpenAI, last_user_message

#: A prompt's answers: (served alone, served in a batch by position).
Answers = tuple[str, Sequence[str]]


@dataclass
class _Batch:
    members: int = 0
    closed: bool = False


@dataclass
class _Batching:
    condition: threading.Condition = field(default_factory=threading.Condition)
    open: _Batch | None = None
    sizes: list[int] = field(default_factory=list)


class BatchingOpenAI(ScriptedOpenAI):
    """The scripted OpenAI server with a batching engine in front of its answers."""

    thread_name = "batching-openai"

    def __init__(self, answers: Mapping[str, Answers], *, slots: int, gather_s: float = 0.3, **scripted: Any) -> None:
        if slots < 2:
            raise ValueError("a batching server needs at least 2 slots")
        self.answers = {prompt: (alone, list(batched)) for prompt, (alone, batched) in answers.items()}
        self.slots = slots
        self.gather_s = gather_s
        self._batching = _Batching()
        super().__init__({}, **scripted)

    @property
    def batches(self) -> list[int]:
        """The size of every batch answered so far, in the order they closed."""
        with self._batching.condition:
            return list(self._batching.sizes)

    def _next_text(self, body: Mapping[str, Any]) -> str:
        position, size = self._join_batch()
        alone, batched = self.answers.get(last_user_message(body) or "", ("OK", ["OK"]))
        return alone if size == 1 else batched[position % len(batched)]

    def _join_batch(self) -> tuple[int, int]:
        """(this request's position in its batch, the batch's size) once the batch is complete."""
        state = self._batching
        with state.condition:
            batch = state.open if state.open is not None and not state.open.closed else _Batch()
            state.open = batch
            position = batch.members
            batch.members += 1
            if batch.members >= self.slots:
                self._close(batch)
            else:
                state.condition.wait_for(lambda: batch.closed, timeout=self.gather_s)
                if not batch.closed:
                    self._close(batch)
            return position, batch.members

    def _close(self, batch: _Batch) -> None:
        batch.closed = True
        self._batching.sizes.append(batch.members)
        self._batching.condition.notify_all()
