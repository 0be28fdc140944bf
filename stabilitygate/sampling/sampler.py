"""Draw N completions per case, concurrently, with retries, a request budget and early stopping.

A pool of `sampling.concurrency` workers pulls (case, index) jobs from one queue ordered round-robin
by sample index, so the requests in flight never exceed the concurrency and no case's samples all
land in one burst. Every sample, good or failed, is handed to `on_sample` as soon as it exists, so
whatever the run is cut short by (a fatal error, the budget, Ctrl-C) loses no sample it received.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from stabilitygate.providers.interface import Completion, FatalProviderError, Provider, ProviderError, Request
from stabilitygate.samples import MAX_LABEL_CHARS, MAX_NAME_CHARS, Sample, TokenLogprob
from stabilitygate.sampling.causes import BUDGET_NOTE
from stabilitygate.sampling.progress import Progress
from stabilitygate.sampling.reply_fields import bounded, checked_usage
from stabilitygate.sampling.retry import Backoff
from stabilitygate.secrets import Secrets
from stabilitygate.suite.model import ResolvedCase, Sampling

BUDGET_FACTOR = 3  # default max_requests = 3 x the samples requested
#: Why a sample failed, as the samples file and the report keep it: redacted with every secret of the
#: run, then folded onto one line, then cut (docs/design.md §12, "Redact, then fold, then cut").
ERROR_SHOWN_CHARS = 1000


@dataclass(frozen=True)
class SamplingOutcome:
    samples: list[Sample]  # in arrival order
    requests_made: int  # attempts sent, retries included
    retries: int
    fatal_error: str | None  # the redacted message of the error that stopped the run
    budget_exhausted: bool
    early_stopped: dict[str, str]  # case id -> why its sampling stopped early
    interrupted: bool  # cancelled from outside (Ctrl-C)
    wall_s: float


@dataclass(frozen=True)
class _Job:
    case: ResolvedCase
    index: int
    request: Request


def _jobs(cases: Sequence[ResolvedCase], start: Mapping[str, int]) -> Iterator[_Job]:
    """Every (case, index) from the case's start, round-robin by index: c1#0, c2#0, ..., c1#1, c2#1, ..."""
    for index in range(max((case.samples for case in cases), default=0)):
        for case in cases:
            if start.get(case.id, 0) <= index < case.samples:
                yield _Job(case, index, Request.of_case(case, index))


@dataclass
class _Run:
    sampling: Sampling
    providers: Mapping[str, Provider]
    on_sample: Callable[[Sample], Sample | None]
    should_stop: Callable[[str, Sequence[Sample]], str | None] | None
    progress: Progress | None
    secrets: Secrets
    backoff: Backoff
    max_requests: int
    jobs: Iterator[_Job]
    clock: Callable[[], float]
    samples: list[Sample] = field(default_factory=list)
    by_case: dict[str, list[Sample]] = field(default_factory=dict)
    requests_made: int = 0
    retries: int = 0
    fatal_error: str | None = None
    budget_exhausted: bool = False
    early_stopped: dict[str, str] = field(default_factory=dict)
    workers: list[asyncio.Task[None]] = field(default_factory=list)

    def next_job(self) -> _Job | None:
        if self.fatal_error is not None or self.budget_exhausted:
            return None
        for job in self.jobs:
            if job.case.id not in self.early_stopped:
                return job
        return None

    async def worker(self) -> None:
        while (job := self.next_job()) is not None:
            sample = await self.draw(job)
            if sample is None:
                return
            self.record(sample)

    async def draw(self, job: _Job) -> Sample | None:
        """One sample with its retries; None when the budget ran out before its first attempt."""
        provider = self.providers[job.case.id]
        last: ProviderError | None = None
        attempt = 0
        latency_ms = 0.0
        while True:
            if self.requests_made >= self.max_requests:
                self.budget_exhausted = True
                if last is None:
                    return None
                return self.failed(job, last, attempt, latency_ms, note=BUDGET_NOTE)
            self.requests_made += 1
            if attempt:
                self.retries += 1
            started = self.clock()
            try:
                async with asyncio.timeout(self.sampling.timeout_s):
                    completion = await provider.complete(job.request)
                completion = replace(completion, usage=checked_usage(completion.usage))
            except FatalProviderError as exc:
                latency_ms = (self.clock() - started) * 1000
                self.halt(exc)
                return self.failed(job, exc, attempt + 1, latency_ms)
            except ProviderError as exc:
                last = exc
            except TimeoutError:
                last = ProviderError(f"no reply within {self.sampling.timeout_s:g} s", retryable=True, kind="timeout")
            except Exception as exc:  # a provider bug must not lose the run: the sample fails, visibly
                last = ProviderError(f"{type(exc).__name__}: {exc}", retryable=False, kind="internal")
            else:
                latency_ms = (self.clock() - started) * 1000
                return self.succeeded(job, completion, attempt + 1, latency_ms)
            latency_ms = (self.clock() - started) * 1000
            if not last.retryable or attempt >= self.sampling.retries:
                return self.failed(job, last, attempt + 1, latency_ms)
            await self.backoff.wait(attempt, last.retry_after)
            attempt += 1

    def succeeded(self, job: _Job, completion: Completion, attempts: int, latency_ms: float) -> Sample:
        """The sample of a completion, every text from the provider redacted: from here on it is stored,
        measured, embedded and shown, and a model (or a `command`) may well echo a key it was given."""
        hide = self.secrets.redact
        usage = {hide(k): v for k, v in completion.usage.items()} if completion.usage is not None else None
        return Sample(
            case=job.case.id,
            index=job.index,
            text=hide(_valid_unicode(completion.text)),
            latency_ms=round(latency_ms, 1),
            fingerprint=bounded(completion.fingerprint, MAX_NAME_CHARS, hide),
            model=bounded(completion.model, MAX_NAME_CHARS, hide),
            usage=usage,
            finish_reason=bounded(completion.finish_reason, MAX_LABEL_CHARS, hide),
            attempts=attempts,
            logprobs=_redacted_logprobs(completion.logprobs, self.secrets),
        )

    def failed(self, job: _Job, error: ProviderError, attempts: int, latency_ms: float, note: str = "") -> Sample:
        return Sample(
            case=job.case.id,
            index=job.index,
            text=None,
            error=self.secrets.preview(f"{error.kind}: {error}", ERROR_SHOWN_CHARS) + note,
            latency_ms=round(latency_ms, 1),
            attempts=attempts,
        )

    def record(self, sample: Sample) -> None:
        sample = self.on_sample(sample) or sample  # what the run holds in its place (a cut text)
        self.samples.append(sample)
        so_far = self.by_case.setdefault(sample.case, [])
        so_far.append(sample)
        if self.progress is not None:
            self.progress.advance(sample)
        if self.should_stop is not None and self.sampling.early_stop and sample.case not in self.early_stopped:
            reason = self.should_stop(sample.case, tuple(so_far))
            if reason:
                self.early_stopped[sample.case] = reason

    def halt(self, error: FatalProviderError) -> None:
        """Stop the run: no new jobs, and the other workers' requests are cancelled."""
        if self.fatal_error is None:
            self.fatal_error = self.secrets.preview(str(error), ERROR_SHOWN_CHARS)
        current = asyncio.current_task()
        for task in self.workers:
            if task is not current:
                task.cancel()


async def sample_cases(
    cases: Sequence[ResolvedCase],
    sampling: Sampling,
    providers: Mapping[str, Provider],
    *,
    on_sample: Callable[[Sample], Sample | None],
    should_stop: Callable[[str, Sequence[Sample]], str | None] | None = None,
    progress: Progress | None = None,
    secrets: Iterable[str] = (),
    backoff: Backoff | None = None,
    clock: Callable[[], float] = time.perf_counter,
    start: Mapping[str, int] | None = None,
) -> SamplingOutcome:
    """Sample every case `case.samples` times with the provider `providers[case.id]`.

    `start` (a later stage of an adaptive run): samples an earlier call already drew per case; this
    call draws indices start..samples-1 only.

    `should_stop(case_id, samples_so_far)` (consulted when `sampling.early_stop` is on) returns a
    reason to draw no more samples of that case. Cancelling the calling task (Ctrl-C) does not raise:
    the outcome comes back with `interrupted=True` and every sample already passed to `on_sample`.
    Exceptions raised by `on_sample` itself (e.g. a full disk) propagate. `on_sample` may return the
    sample the run holds in its place (`held_texts.HeldTexts`: its text cut, once it is written whole).
    `progress` is closed at the end.
    Latencies and the wall time are read from `clock` (seconds), which tests replace.
    """
    missing = [case.id for case in cases if case.id not in providers]
    if missing:
        raise ValueError(f"no provider for cases {missing}")
    start = start or {}
    total = sum(max(case.samples - start.get(case.id, 0), 0) for case in cases)
    run = _Run(
        sampling=sampling,
        providers=providers,
        on_sample=on_sample,
        should_stop=should_stop,
        progress=progress,
        secrets=Secrets.of(secrets),
        backoff=backoff or Backoff.from_sampling(sampling),
        max_requests=sampling.max_requests or BUDGET_FACTOR * total,
        jobs=_jobs(cases, start),
        clock=clock,
    )
    started = clock()
    interrupted = False
    run.workers = [asyncio.create_task(run.worker()) for _ in range(min(sampling.concurrency, total))]
    try:
        if run.workers:
            done, _ = await asyncio.wait(run.workers, return_when=asyncio.FIRST_EXCEPTION)
            _raise_worker_error(done)
    except asyncio.CancelledError:
        interrupted = True
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # handled here: the caller goes on to report what was sampled
    finally:
        for worker in run.workers:
            worker.cancel()
        await asyncio.gather(*run.workers, return_exceptions=True)
        if progress is not None:
            progress.close()
    return SamplingOutcome(
        samples=list(run.samples),
        requests_made=run.requests_made,
        retries=run.retries,
        fatal_error=run.fatal_error,
        budget_exhausted=run.budget_exhausted,
        early_stopped=dict(run.early_stopped),
        interrupted=interrupted,
        wall_s=round(clock() - started, 3),
    )


def _raise_worker_error(done: Iterable[asyncio.Task[object]]) -> None:
    """Re-raise what broke a worker (on_sample failing, e.g. a full disk): that is not a sample error."""
    for task in done:
        error = None if task.cancelled() else task.exception()
        if error is not None:
            raise error


def _redacted(text: str | None, hide: Callable[[str], str]) -> str | None:
    return None if text is None else hide(text)


def _redacted_logprobs(tokens: Sequence[TokenLogprob] | None, secrets: Secrets) -> tuple[TokenLogprob, ...] | None:
    """The logprobs, each token redacted; none at all when the tokens and their runner-ups, taken
    one of each position in any mix, spell a secret that no single entry holds."""
    if tokens is None:
        return None
    hide = secrets.redact
    shown = tuple(replace(t, token=hide(t.token), runner_up=_redacted(t.runner_up, hide)) for t in tokens)
    lattice = [(t.token,) if t.runner_up is None else (t.token, t.runner_up) for t in shown]
    return None if secrets.spelled_by(lattice) else shown


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_unicode(text: str) -> str:
    """Lone surrogates (JSON allows "\\ud800") cannot be written as UTF-8: they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text
