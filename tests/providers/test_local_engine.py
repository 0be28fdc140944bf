"""The local batching engine: batching, load failures, cancellation, shutdown, sharing between providers.

Tests that need the model share one load per process (the `local_model` cache) and keep max_tokens small.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.providers.interface import FatalProviderError, ProviderError
from stabilitygate.providers.local_decode import BatchJob, GenerationResult, GenerationSpec, decode_batch
from stabilitygate.providers.local_engine import Engine, acquire_engine, release_engine
from stabilitygate.providers.local_model import LoadedModel, ModelSource, load_model, resolve_model_source
from tests.providers.engine_gate import GUARD_S, BatchGate, queued


def _user(text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": text},)


def test_a_broken_model_file_fails_every_request_as_fatal(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    engine = Engine(resolve_model_source(str(broken)))

    async def main() -> tuple[BaseException, BaseException]:
        with pytest.raises(FatalProviderError) as first:
            await engine.generate(GenerationSpec(_user("hi")))
        with pytest.raises(FatalProviderError) as second:
            await engine.generate(GenerationSpec(_user("hi")))
        await engine.aclose()
        return first.value, second.value

    first, second = asyncio.run(main())
    assert "could not load local model" in str(first)
    assert str(broken) in str(first)
    assert str(second) == str(first)
    assert engine.batch_sizes == []


@pytest.fixture(scope="module")
def source() -> ModelSource:
    source = resolve_model_source(None)
    load_model(source)  # the ~20 s load, once per process; each test's engine then starts at once
    return source


def _spec(prompt: str, max_tokens: int, **kw: Any) -> GenerationSpec:
    return GenerationSpec(_user(prompt), max_tokens=max_tokens, **kw)


@pytest.mark.slow
def test_requests_queued_behind_a_running_batch_form_the_next_batch(source: ModelSource) -> None:
    engine = Engine(source)
    gate = BatchGate(engine)

    async def main() -> list[int]:
        try:
            first = asyncio.create_task(engine.generate(_spec("Name a fruit.", 16)))
            await gate.taken()  # the first is running alone; the rest queue behind it
            prompts = ["Name a colour.", "Say hello in Spanish.", "What is 2+2?", "Name a planet, and why."]
            rest = await queued(engine, [engine.generate(_spec(p, 8)) for p in prompts])
            gate.open()
            results = await asyncio.gather(first, *rest)
            return [r.batch_size for r in results]
        finally:
            await engine.aclose()

    assert asyncio.run(main()) == [1, 4, 4, 4, 4]
    assert engine.batch_sizes == [1, 4]


@pytest.mark.slow
def test_queued_requests_are_split_by_their_max_batch_and_all_complete(source: ModelSource) -> None:
    engine = Engine(source)
    gate = BatchGate(engine)

    async def main() -> list[int]:
        try:
            blocker = asyncio.create_task(engine.generate(_spec("Say one word.", 2)))
            await gate.taken()
            words = ["cat", "dog", "tree", "sun", "moon", "car", "book"]
            specs = [_spec(f"Give me a word that rhymes with {w}.", 4, max_batch=3) for w in words]
            tasks = await queued(engine, [engine.generate(s) for s in specs])
            gate.open()
            await blocker
            results = await asyncio.gather(*tasks)
            assert all(r.completion_tokens >= 1 for r in results)
            return [r.batch_size for r in results]
        finally:
            await engine.aclose()

    assert asyncio.run(main()) == [3, 3, 3, 3, 3, 3, 1]  # oldest first, three at a time
    assert engine.batch_sizes == [1, 3, 3, 1]


@pytest.mark.slow
def test_the_event_loop_keeps_running_while_the_model_generates(source: ModelSource) -> None:
    answered: list[bool] = []

    async def main() -> GenerationResult:
        loop = asyncio.get_running_loop()
        mid_generation = asyncio.Event()
        loop_answer = threading.Event()

        def decode(
            loaded: LoadedModel, batch: Sequence[BatchJob], stopping: Callable[[], bool]
        ) -> list[GenerationResult | ProviderError]:
            def after_each_token() -> bool:
                if not answered:  # one token in: a coroutine on the loop must be able to run right now
                    loop.call_soon_threadsafe(mid_generation.set)
                    answered.append(loop_answer.wait(GUARD_S))
                return stopping()

            return decode_batch(loaded, batch, after_each_token)

        engine = Engine(source, decode=decode)
        try:
            generating = asyncio.create_task(engine.generate(_spec("Tell me about the moon.", 16)))
            await mid_generation.wait()
            loop_answer.set()
            return await generating
        finally:
            await engine.aclose()

    result = asyncio.run(main())
    assert answered == [True]
    assert result.completion_tokens >= 1


@pytest.mark.slow
def test_a_cancelled_request_leaves_the_others_running(source: ModelSource) -> None:
    engine = Engine(source)
    gate = BatchGate(engine)

    async def main() -> list[str]:
        try:
            running = asyncio.create_task(engine.generate(_spec("Describe rain.", 12)))
            await gate.taken()
            doomed, kept = await queued(
                engine, [engine.generate(_spec("Describe snow.", 64)), engine.generate(_spec("Describe wind.", 4))]
            )
            doomed.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await doomed
            assert engine.pending == 1  # the cancelled request no longer counts
            gate.open()
            results = await asyncio.gather(running, kept)
            assert doomed.cancelled()
            return [r.text for r in results]
        finally:
            await engine.aclose()

    texts = asyncio.run(main())
    assert all(texts)
    assert engine.batch_sizes == [1, 1]  # the cancelled request never took a place in a batch


@pytest.mark.slow
def test_closing_fails_queued_requests_and_refuses_new_ones(source: ModelSource) -> None:
    engine = Engine(source)
    gate = BatchGate(engine)

    async def main() -> list[BaseException | object]:
        running = asyncio.create_task(engine.generate(_spec("Describe a forest.", 64)))
        await gate.taken()
        (waiting,) = await queued(engine, [engine.generate(_spec("Describe a desert.", 8))])
        closing = asyncio.create_task(engine.aclose())
        await asyncio.sleep(0)  # aclose has run up to waiting for the worker: the engine is stopping
        with pytest.raises(ProviderError, match="closed"):
            await engine.generate(GenerationSpec(_user("Anyone there?")))
        gate.open()  # the held batch resumes and sees the engine stopping at its next token
        await closing
        outcomes: list[BaseException | object] = await asyncio.gather(running, waiting, return_exceptions=True)
        return outcomes

    outcomes = asyncio.run(main())
    assert all(isinstance(o, ProviderError) and o.kind == "closed" for o in outcomes)
    assert engine.batch_sizes == [1]


def test_acquired_engines_are_shared_until_the_last_release() -> None:
    source = resolve_model_source(None)

    async def main() -> None:
        first = acquire_engine(source)
        second = acquire_engine(source)
        assert first is second
        await release_engine(first)
        assert acquire_engine(source) is first  # one user still holds it
        await release_engine(first)
        await release_engine(first)
        fresh = acquire_engine(source)
        assert fresh is not first
        await release_engine(fresh)

    asyncio.run(main())
