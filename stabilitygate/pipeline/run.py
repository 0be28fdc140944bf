"""Live sampling for `stabilitygate.run`: every case N times, with nothing measured lost on interruption."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TypeAlias

from stabilitygate.judge.thresholds import certain_violation
from stabilitygate.pipeline.options import Shard
from stabilitygate.providers import make_provider
from stabilitygate.providers.interface import Provider, ProviderError
from stabilitygate.report.model import SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.sampling.held_texts import HeldTexts
from stabilitygate.sampling.progress import Progress
from stabilitygate.sampling.sampler import ERROR_SHOWN_CHARS, SamplingOutcome, sample_cases
from stabilitygate.sampling.samples_file import SamplesWriter
from stabilitygate.secrets import Secrets
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase, Sampling

log = logging.getLogger("stabilitygate")
#: Bounds of the waits outside the requests (whose own bound is sampling.timeout_s), docs/design.md §14.
WARM_UP_LIMIT_S = 600.0
CLOSE_LIMIT_S = 30.0


@dataclass(frozen=True)
class Sampled:
    """What live sampling produced: every sample received (also on interruption) and the run's facts."""

    samples: list[Sample]
    facts: SamplingFacts


def draw_samples(
    cases: Sequence[ResolvedCase],
    settings: Sampling,
    environ: Mapping[str, str],
    *,
    secrets: Sequence[str],
    samples_out: Path | None = None,
    progress: bool | None = False,
    shard: Shard | None = None,
    on_completion: Callable[[str], None] | None = None,
    start: Mapping[str, int] | None = None,
    append: bool = False,
    held: HeldTexts | None = None,
) -> Sampled:
    """Sample every case; SIGINT/SIGTERM stop sampling and keep (and have written) what was received.

    `on_completion` sees each completion's text as it arrives (the embedder starts on it meanwhile).
    `start` and `append` (a later stage, pipeline/stages.py): the samples each case already has, and
    the samples file to append to. `held`: the run's bound on the text its samples hold, shared by
    every draw of the run (its own when None).
    """
    received: list[Sample] = []
    held = (held or HeldTexts()).knowing(cases)
    with _samples_sink(samples_out, append) as write:

        def on_sample(sample: Sample) -> Sample:
            write(sample)  # whole: the samples file keeps every completion as it came
            kept = held.hold(sample)  # past the run's bound, a long text is held cut
            received.append(kept)
            if on_completion is not None and kept.text is not None:
                on_completion(kept.text)
            return kept

        outcome, interrupted = asyncio.run(_sample(cases, settings, environ, secrets, on_sample, progress, start or {}))

    facts = SamplingFacts(
        requests=outcome.requests_made if outcome else len(received),
        retries=outcome.retries if outcome else 0,
        interrupted=interrupted or bool(outcome and outcome.interrupted),
        budget_exhausted=bool(outcome and outcome.budget_exhausted),
        fatal_error=outcome.fatal_error if outcome else None,
        early_stopped=dict(outcome.early_stopped) if outcome else {},
        samples_file=str(samples_out) if samples_out else None,
        shard=str(shard) if shard else None,
        concurrency=settings.concurrency,
    )
    if facts.interrupted:
        log.warning("interrupted; %d samples kept", len(received))
    if facts.fatal_error:
        log.error("error: %s", facts.fatal_error)
    return Sampled(received, facts)


def sampling_settings(loaded: LoadedSuite, concurrency: int | None, early_stop: bool | None) -> Sampling:
    """The suite's sampling settings with the caller's overrides."""
    settings = loaded.suite.sampling
    return settings.model_copy(
        update={
            "concurrency": concurrency or settings.concurrency,
            "early_stop": settings.early_stop if early_stop is None else early_stop,
        }
    )


@contextlib.contextmanager
def _samples_sink(samples_out: Path | None, append: bool = False) -> Iterator[Callable[[Sample], None]]:
    if samples_out is None:
        yield lambda sample: None
        return
    with SamplesWriter(samples_out, append=append) as writer:
        yield writer.write


async def _sample(
    cases: Sequence[ResolvedCase],
    sampling: Sampling,
    env: Mapping[str, str],
    secrets: Sequence[str],
    on_sample: Callable[[Sample], Sample | None],
    progress_mode: bool | None,
    start: Mapping[str, int],
) -> tuple[SamplingOutcome | None, bool]:
    """Sample every case; SIGINT/SIGTERM cancel the sampling and keep what was received."""
    providers = _providers(cases, sampling, env, secrets)
    total = sum(c.samples - start.get(c.id, 0) for c in cases)
    progress = None if progress_mode is False else Progress(total, interactive=progress_mode)

    async def warm_then_sample() -> SamplingOutcome:
        await _warm_up(providers)
        return await sample_cases(
            cases,
            sampling,
            providers,
            on_sample=on_sample,
            should_stop=early_stop_rule(cases) if sampling.early_stop else None,
            progress=progress,
            secrets=secrets,
            start=start,
        )

    try:
        return await _until_interrupted(warm_then_sample())
    except ProviderError as exc:  # the warm-up failed: nothing was sampled
        return _nothing_sampled(Secrets.of(secrets).preview(str(exc), ERROR_SHOWN_CHARS)), False
    finally:
        if progress is not None:
            progress.close()
        await _close(providers)


async def _warm_up(providers: Mapping[str, Provider], limit_s: float = WARM_UP_LIMIT_S) -> None:
    """A provider that loads a model in-process does it before the clock of any request starts.

    Bounded like every other wait of a run: a load that never ends is a run that cannot measure."""
    for provider in _distinct(providers):
        try:
            async with asyncio.timeout(limit_s):
                await provider.warm_up()
        except TimeoutError as exc:
            raise ProviderError(
                f"waited {limit_s:g} s for the provider to load its model, and it has not finished", retryable=False
            ) from exc


async def _close(providers: Mapping[str, Provider], limit_s: float = CLOSE_LIMIT_S) -> None:
    """Close every provider; one that does not close in time is left to the process exit."""
    for provider in _distinct(providers):
        with contextlib.suppress(Exception):
            async with asyncio.timeout(limit_s):
                await provider.aclose()


def _distinct(providers: Mapping[str, Provider]) -> list[Provider]:
    """Each provider once: cases that share an endpoint share one."""
    return list({id(p): p for p in providers.values()}.values())


async def _until_interrupted(work: Awaitable[SamplingOutcome]) -> tuple[SamplingOutcome | None, bool]:
    """(the outcome, False), or (None, True) when SIGINT or SIGTERM cancelled the work."""
    task = asyncio.ensure_future(work)
    interrupted = False
    loop = asyncio.get_running_loop()

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        task.cancel()

    previous = _on_signals(loop, interrupt)
    try:
        return await task, False
    except asyncio.CancelledError:
        if not interrupted:
            raise
        return None, True
    finally:
        _on_signals(loop, None, previous)


def _nothing_sampled(fatal_error: str) -> SamplingOutcome:
    return SamplingOutcome(
        samples=[],
        requests_made=0,
        retries=0,
        fatal_error=fatal_error,
        budget_exhausted=False,
        early_stopped={},
        interrupted=False,
        wall_s=0.0,
    )


#: What `signal.getsignal` gives back, to be put back with `signal.signal`.
SignalHandler: TypeAlias = Callable[[int, FrameType | None], object] | int | signal.Handlers | None


def _on_signals(
    loop: asyncio.AbstractEventLoop,
    handler: Callable[[], None] | None,
    previous: Mapping[int, SignalHandler] | None = None,
) -> dict[int, SignalHandler]:
    """SIGINT and SIGTERM call `handler`; with None, back to the `previous` handlers (the ones this
    returned when it installed `handler`: a run's own SIGTERM handler, `failures.sigterm_interrupts`,
    must outlive sampling). Event-loop signal handlers exist on Unix only, where CI runners and the
    container run; elsewhere Ctrl-C stays a KeyboardInterrupt."""
    before: dict[int, SignalHandler] = {}
    if sys.platform == "win32":
        return before
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(RuntimeError, ValueError):  # not the main thread: leave signals alone
            before[sig] = signal.getsignal(sig)
            if handler is None:
                loop.remove_signal_handler(sig)
                if previous is not None and previous.get(sig) is not None:
                    signal.signal(sig, previous[sig])
            else:
                loop.add_signal_handler(sig, handler)
    return before


def _providers(
    cases: Sequence[ResolvedCase], sampling: Sampling, env: Mapping[str, str], secrets: Sequence[str]
) -> dict[str, Provider]:
    """One provider per distinct configuration, so cases that share an endpoint share its connections;
    each redacts the run's `secrets` beside its own."""
    shared: dict[str, Provider] = {}
    by_case: dict[str, Provider] = {}
    for case in cases:
        key = case.provider.model_dump_json()
        if key not in shared:
            shared[key] = make_provider(case.provider, environ=env, timeout_s=sampling.timeout_s, run_secrets=secrets)
        by_case[case.id] = shared[key]
    return by_case


def early_stop_rule(cases: Sequence[ResolvedCase]) -> Callable[[str, Sequence[Sample]], str | None]:
    """Stop a case once an absolute threshold has certainly failed, whatever its remaining samples say."""
    by_id = {c.id: c for c in cases}

    def should_stop(case_id: str, taken: Sequence[Sample]) -> str | None:
        completions = Counter(s.text for s in taken if s.text is not None)
        return certain_violation(by_id[case_id], completions, len(taken))

    return should_stop
