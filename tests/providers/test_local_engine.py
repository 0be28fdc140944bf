"""The local batching engine: batching, load failures, cancellation, shutdown, sharing between providers.

Tests that need the model share one load per process (the `local_model` cache) and keep max_tokens small.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stabilitygate.providers.interface import FatalProviderError, ProviderError
from stabilitygate.providers.local_decode import GenerationSpec
from stabilitygate.providers.local_engine import Engine, acquire_engine, release_engine
from stabilitygate.providers.local_model import load_model, resolve_model_source


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
def engine() -> Iterator[Engine]:
    source = resolve_model_source(None)
    load_model(source)  # the ~20 s load, once per process
    engine = Engine(source)
    yield engine
    asyncio.run(engine.aclose())


async def _wait_for_batches(engine: Engine, count: int) -> None:
    while len(engine.batch_sizes) < count:
        await asyncio.sleep(0.005)


@pytest.mark.slow
def test_staggered_requests_form_batches_of_different_sizes(engine: Engine) -> None:
    async def main() -> list[int]:
        before = len(engine.batch_sizes)
        first = asyncio.create_task(engine.generate(GenerationSpec(_user("Name a fruit."), max_tokens=16)))
        await _wait_for_batches(engine, before + 1)  # the first is running alone; the rest queue behind it
        prompts = ["Name a colour.", "Say hello in Spanish.", "What is 2+2?", "Name a planet, and why."]
        rest = [engine.generate(GenerationSpec(_user(p), max_tokens=8)) for p in prompts]
        results = await asyncio.gather(first, *rest)
        return [r.batch_size for r in results]

    sizes = asyncio.run(main())
    assert sizes == [1, 4, 4, 4, 4]
    assert len(set(engine.batch_sizes)) > 1


@pytest.mark.slow
def test_many_tasks_respect_max_batch_and_all_complete(engine: Engine) -> None:
    async def main() -> list[int]:
        specs = [
            GenerationSpec(_user(f"Give me a word that rhymes with {w}."), max_tokens=4, max_batch=3)
            for w in ["cat", "dog", "tree", "sun", "moon", "car", "book"]
        ]
        results = await asyncio.gather(*(engine.generate(s) for s in specs))
        assert all(r.completion_tokens >= 1 for r in results)
        return [r.batch_size for r in results]

    before = len(engine.batch_sizes)
    sizes = asyncio.run(main())
    assert len(sizes) == 7
    assert max(sizes) <= 3
    assert sum(engine.batch_sizes[before:]) == 7


@pytest.mark.slow
def test_the_event_loop_keeps_running_while_the_model_generates(engine: Engine) -> None:
    async def main() -> tuple[int, float]:
        stamps: list[float] = []

        async def ticker() -> None:
            while True:
                stamps.append(time.monotonic())
                await asyncio.sleep(0.01)

        tick = asyncio.create_task(ticker())
        await engine.generate(GenerationSpec(_user("Tell me about the moon."), max_tokens=16))
        tick.cancel()
        gaps = [b - a for a, b in itertools.pairwise(stamps)]
        return len(stamps), max(gaps)

    ticks, worst_gap = asyncio.run(main())
    assert ticks >= 10
    assert worst_gap < 1.0


@pytest.mark.slow
def test_a_cancelled_request_leaves_the_others_running(engine: Engine) -> None:
    async def main() -> list[str]:
        before = len(engine.batch_sizes)
        running = asyncio.create_task(engine.generate(GenerationSpec(_user("Describe rain."), max_tokens=12)))
        await _wait_for_batches(engine, before + 1)
        doomed = asyncio.create_task(engine.generate(GenerationSpec(_user("Describe snow."), max_tokens=64)))
        kept = asyncio.create_task(engine.generate(GenerationSpec(_user("Describe wind."), max_tokens=4)))
        await asyncio.sleep(0)
        doomed.cancel()
        results = await asyncio.gather(running, kept)
        assert doomed.cancelled()
        assert engine.batch_sizes[before:] == [1, 1]  # the cancelled request never took a place in a batch
        return [r.text for r in results]

    texts = asyncio.run(main())
    assert all(texts)


@pytest.mark.slow
def test_closing_fails_queued_requests_and_refuses_new_ones() -> None:
    engine = Engine(resolve_model_source(None))

    async def main() -> list[BaseException | object]:
        running = asyncio.create_task(engine.generate(GenerationSpec(_user("Describe a forest."), max_tokens=64)))
        await _wait_for_batches(engine, 1)
        queued = asyncio.create_task(engine.generate(GenerationSpec(_user("Describe a desert."), max_tokens=8)))
        await asyncio.sleep(0)
        await engine.aclose()
        outcomes = await asyncio.gather(running, queued, return_exceptions=True)
        with pytest.raises(ProviderError, match="closed"):
            await engine.generate(GenerationSpec(_user("Anyone there?")))
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
