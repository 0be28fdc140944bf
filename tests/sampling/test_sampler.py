"""The sampler against the scripted OpenAI server: counts, retries, concurrency, interleaving, stops."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from stabilitygate.providers.interface import Completion, Provider, ProviderError, Request, TokenLogprob
from stabilitygate.providers.openai import OpenAIConfig, OpenAIProvider
from stabilitygate.samples import Sample
from stabilitygate.sampling.progress import Progress
from stabilitygate.sampling.retry import Backoff
from stabilitygate.sampling.sampler import SamplingOutcome, sample_cases
from stabilitygate.suite.model import Message, ProviderConfig, ResolvedCase, Sampling, Thresholds
from tests.support.openai_server import Fault, ScriptedOpenAI

FEYNMAN = "Where was Feynman born?"
KEY = "sk-secret-never-shown-42"
# Only reached when the code under test is broken: the test then fails on what it saw, instead of hanging.
GUARD_S = 60


def _case(case_id: str, prompt: str, samples: int, config: ProviderConfig) -> ResolvedCase:
    return ResolvedCase(
        id=case_id,
        line=None,
        messages=(Message(role="user", content=prompt),),
        provider=config,
        thresholds=Thresholds(),
        answer=None,
        expected=None,
        samples=samples,
    )


class Recorder:
    """on_sample that keeps what it was given, and a sleep that records its waits without taking them."""

    def __init__(self) -> None:
        self.samples: list[Sample] = []
        self.waits: list[float] = []

    def __call__(self, sample: Sample) -> None:
        self.samples.append(sample)

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)  # still a suspension point, as a real wait is


def _run(
    server: ScriptedOpenAI,
    cases_spec: Sequence[tuple[str, str, int]],
    sampling: Sampling,
    *,
    environ: Mapping[str, str] | None = None,
    api_key_env: str | None = None,
    recorder: Recorder | None = None,
    backoff_base_s: float = 0.01,
    **kw: Any,
) -> tuple[SamplingOutcome, Recorder]:
    recorder = recorder or Recorder()
    config = OpenAIConfig(
        type="openai", model="m", base_url=server.base_url, api_key_env=api_key_env, params={"temperature": 0}
    )
    cases = [_case(cid, prompt, n, config) for cid, prompt, n in cases_spec]

    async def go() -> SamplingOutcome:
        provider = OpenAIProvider(config, environ=environ or {})
        try:
            return await sample_cases(
                cases,
                sampling,
                {case.id: provider for case in cases},
                on_sample=recorder,
                backoff=Backoff(base_s=backoff_base_s, max_wait_s=sampling.max_retry_wait_s, sleep=recorder.sleep),
                **kw,
            )
        finally:
            await provider.aclose()

    return asyncio.run(go()), recorder


def _in_waves(size: int, *, first_only: bool = False) -> Fault:
    """A rule that faults nothing: the server holds each request until `size` of them are there together."""
    barrier = threading.Barrier(size)

    def hold(body: Any, number: int) -> bool:
        if number <= size or not first_only:
            barrier.wait(GUARD_S)
        return False

    return Fault("status", when=hold)


def test_feynman_scenario_429_every_7th_and_500_every_11th() -> None:
    script = {FEYNMAN: [("Queens, New York", 8), ("New York City", 2)]}
    faults = [Fault("status", status=429, every=7, retry_after="0.02"), Fault("status", status=500, every=11)]
    with ScriptedOpenAI(script, faults=faults) as server:
        outcome, recorder = _run(server, [("borough", FEYNMAN, 10)], Sampling(samples=10, concurrency=4))
        served = server.count
    assert len(outcome.samples) == 10 and all(s.ok for s in outcome.samples)
    assert sorted(s.index for s in outcome.samples) == list(range(10))
    assert Counter(s.text for s in outcome.samples) == {"Queens, New York": 8, "New York City": 2}
    assert served == 12  # requests 7 and 11 failed and were retried
    assert outcome.requests_made == 12 and outcome.retries == 2
    assert 0.02 in recorder.waits  # the 429's Retry-After was honoured
    assert sum(s.attempts for s in outcome.samples) == 12
    assert recorder.samples == outcome.samples  # every sample went to on_sample, in arrival order
    assert {s.fingerprint for s in outcome.samples} == {"fp_scripted"}
    assert outcome.fatal_error is None and not outcome.budget_exhausted and not outcome.interrupted


def test_retry_after_is_capped_by_max_retry_wait() -> None:
    faults = [Fault("status", status=429, at={1}, retry_after="30")]
    with ScriptedOpenAI(faults=faults) as server:
        outcome, recorder = _run(server, [("a", "q", 2)], Sampling(samples=2, concurrency=1, max_retry_wait_s=0.05))
    assert recorder.waits == [0.05]  # not the 30 s asked for
    assert [s.ok for s in outcome.samples] == [True, True] and outcome.samples[0].attempts == 2


def test_backoff_without_retry_after_grows() -> None:
    faults = [Fault("status", status=503, at={1, 2, 3})]
    with ScriptedOpenAI(faults=faults) as server:
        outcome, recorder = _run(server, [("a", "q", 2)], Sampling(samples=2, concurrency=1), backoff_base_s=0.02)
    assert len(recorder.waits) == 3
    assert all(0 <= w <= 0.02 * 2**n for n, w in enumerate(recorder.waits))
    assert outcome.samples[0].attempts == 4 and outcome.retries == 3


def test_concurrency_bound_is_what_the_server_sees() -> None:
    # The first three requests are held until all three are in: a sampler that sent them one by one would
    # never get them answered; the latency keeps later requests overlapping, so that a fourth would show.
    with ScriptedOpenAI(latency_s=0.03, faults=[_in_waves(3, first_only=True)]) as server:
        outcome, _ = _run(server, [("a", "qa", 20), ("b", "qb", 20)], Sampling(samples=2, concurrency=3))
        assert server.max_in_flight == 3 and server.count == 40
    assert len(outcome.samples) == 40


def test_cases_are_interleaved_round_robin_by_sample_index() -> None:
    with ScriptedOpenAI() as server:
        _run(server, [("a", "qa", 3), ("b", "qb", 2), ("c", "qc", 3)], Sampling(samples=2, concurrency=1))
        prompts = [r.body["messages"][-1]["content"] for r in server.requests]
    assert prompts == ["qa", "qb", "qc", "qa", "qb", "qc", "qa", "qc"]


def test_interleaving_holds_with_concurrency() -> None:
    # Answered in waves of four, each wave is the next four jobs in the queue, whichever worker sent them.
    with ScriptedOpenAI(faults=[_in_waves(4)]) as server:
        _run(server, [("a", "qa", 10), ("b", "qb", 10)], Sampling(samples=2, concurrency=4))
        prompts = [r.body["messages"][-1]["content"] for r in server.requests]
    waves = [Counter(prompts[i : i + 4]) for i in range(0, 20, 4)]
    assert waves == [{"qa": 2, "qb": 2}] * 5  # never one case's samples in one burst


def test_fatal_401_stops_quickly_and_never_shows_the_key() -> None:
    with ScriptedOpenAI(api_key="sk-the-right-one", latency_s=0.05) as server:
        outcome, recorder = _run(
            server,
            [("a", "qa", 50), ("b", "qb", 50)],
            Sampling(samples=2, concurrency=4),
            environ={"TEST_KEY": KEY},
            api_key_env="TEST_KEY",
            secrets=[KEY],
        )
        served = server.count
    assert outcome.fatal_error is not None and "HTTP 401" in outcome.fatal_error
    assert served <= 4  # the first wave only: nothing was sent after the refusal
    assert 1 <= len(outcome.samples) <= 4 and all(not s.ok for s in outcome.samples)
    everything = outcome.fatal_error + "".join(str(s.to_json()) for s in recorder.samples)
    assert KEY not in everything and "authentication refused" in everything


def test_hanging_server_is_bounded_by_the_request_timeout() -> None:
    # Every request hangs, so every attempt times out however fast or slow the machine is. Without the
    # timeout the hang would end (GUARD_S later) in a dropped connection: a different error.
    with ScriptedOpenAI(faults=[Fault("hang", delay_s=GUARD_S)]) as server:
        outcome, _ = _run(server, [("a", "q", 4)], Sampling(samples=4, concurrency=4, timeout_s=0.2, retries=1))
        served = server.count
    assert len(outcome.samples) == 4 and served == 8
    assert all(s.error == "timeout: no reply within 0.2 s" and s.attempts == 2 for s in outcome.samples)


def test_samples_that_keep_failing_are_recorded_not_lost() -> None:
    with ScriptedOpenAI(faults=[Fault("status", status=500, prompt="bad")]) as server:
        outcome, _ = _run(server, [("good", "fine", 3), ("bad", "bad", 3)], Sampling(samples=3, retries=2))
    bad = [s for s in outcome.samples if s.case == "bad"]
    good = [s for s in outcome.samples if s.case == "good"]
    assert len(bad) == 3 and len(good) == 3 and all(s.ok for s in good)
    assert all(s.text is None and s.attempts == 3 and s.error.startswith("http_500: HTTP 500") for s in bad)  # type: ignore[union-attr]
    assert outcome.requests_made == 3 + 9 and outcome.retries == 6


def test_not_retryable_errors_fail_at_once() -> None:
    with ScriptedOpenAI(faults=[Fault("huge", size=9 * 1024 * 1024)]) as server:
        outcome, _ = _run(server, [("a", "q", 2)], Sampling(samples=2, retries=5))
        served = server.count
    assert served == 2 and all(s.error.startswith("too_large: ") for s in outcome.samples)  # type: ignore[union-attr]


def test_request_budget_stops_the_run() -> None:
    with ScriptedOpenAI(faults=[Fault("status", status=503)]) as server:
        outcome, _ = _run(server, [("a", "q", 4)], Sampling(samples=4, concurrency=1, retries=5, max_requests=5))
        served = server.count
    assert served == 5 and outcome.requests_made == 5 and outcome.budget_exhausted
    (sample,) = outcome.samples  # the one sample that was attempted is recorded, failed
    assert sample.error is not None and sample.error.endswith("(request budget exhausted)")


def test_default_budget_is_three_times_the_samples() -> None:
    with ScriptedOpenAI(faults=[Fault("status", status=503)]) as server:
        outcome, _ = _run(server, [("a", "q", 2), ("b", "q", 2)], Sampling(samples=2, concurrency=2, retries=50))
        served = server.count
    assert served == 12 and outcome.budget_exhausted


def test_early_stop_draws_no_more_samples_of_that_case() -> None:
    calls: list[tuple[str, int]] = []

    def should_stop(case_id: str, taken: Sequence[Sample]) -> str | None:
        calls.append((case_id, len(taken)))
        return "certainly failed" if case_id == "a" and len(taken) >= 3 else None

    with ScriptedOpenAI() as server:
        outcome, _ = _run(
            server, [("a", "qa", 20), ("b", "qb", 5)], Sampling(samples=2, concurrency=1), should_stop=should_stop
        )
    counts = Counter(s.case for s in outcome.samples)
    assert counts == {"a": 3, "b": 5}
    assert outcome.early_stopped == {"a": "certainly failed"}
    assert ("a", 4) not in calls and ("b", 5) in calls


def test_early_stop_off_in_the_suite_ignores_the_rule() -> None:
    with ScriptedOpenAI() as server:
        outcome, _ = _run(
            server,
            [("a", "qa", 6)],
            Sampling(samples=2, concurrency=2, early_stop=False),
            should_stop=lambda case_id, taken: "stop",
        )
    assert len(outcome.samples) == 6 and outcome.early_stopped == {}


def test_progress_is_advanced_and_closed() -> None:
    stream = __import__("io").StringIO()
    progress = Progress(5, stream=stream, interactive=False, interval_s=0)
    with ScriptedOpenAI() as server:
        _run(server, [("a", "q", 5)], Sampling(samples=5), progress=progress)
    assert progress.done == 5 and stream.getvalue().splitlines()[-1].startswith("sampling: 5/5 samples")


def test_samples_record_usage_latency_and_idempotency_keys() -> None:
    with ScriptedOpenAI() as server:
        outcome, _ = _run(server, [("a", "q", 3)], Sampling(samples=3))
    assert all(s.latency_ms is not None and s.latency_ms >= 0 and s.usage for s in outcome.samples)
    assert all(s.model == "scripted-model" and s.finish_reason == "stop" for s in outcome.samples)


# ---- logic that needs no network: a provider written for the test


class Scripted(Provider):
    """A provider whose behaviour per call is a function of the request."""

    def __init__(self, behave: Callable[[Request], Any]) -> None:
        self.behave = behave
        self.requests: list[Request] = []

    async def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        result = self.behave(request)
        if asyncio.iscoroutine(result):
            result = await result
        if isinstance(result, BaseException):
            raise result
        return result if isinstance(result, Completion) else Completion(text=result)


def _logic_run(provider: Provider, spec: Sequence[tuple[str, int]], sampling: Sampling, **kw: Any) -> SamplingOutcome:
    config = ProviderConfig(type="openai", model="m")
    cases = [_case(cid, f"prompt {cid}", n, config) for cid, n in spec]
    recorder = kw.pop("recorder", Recorder())
    return asyncio.run(
        sample_cases(
            cases,
            sampling,
            {c.id: provider for c in cases},
            on_sample=recorder,
            backoff=Backoff(base_s=0.001, sleep=Recorder().sleep),
            **kw,
        )
    )


def test_idempotency_keys_are_stable_and_unique() -> None:
    provider = Scripted(lambda request: "x")
    _logic_run(provider, [("a", 3), ("b", 3)], Sampling(samples=3))
    keys = [r.idempotency_key for r in provider.requests]
    assert len(set(keys)) == 6 and all(k.startswith("sha256:") for k in keys)
    again = Scripted(lambda request: "x")
    _logic_run(again, [("a", 3), ("b", 3)], Sampling(samples=3))
    assert sorted(keys) == sorted(r.idempotency_key for r in again.requests)


def test_a_case_with_shared_idempotency_sends_one_key_for_all_its_samples() -> None:
    provider = Scripted(lambda request: "x")
    config = ProviderConfig(type="openai", model="m")
    shared = _case("a", "prompt a", 4, config).model_copy(update={"idempotency": "shared"})
    cases = [shared, _case("b", "prompt b", 4, config)]
    asyncio.run(sample_cases(cases, Sampling(samples=4), {c.id: provider for c in cases}, on_sample=Recorder()))
    by_case: dict[str, list[Request]] = {}
    for request in provider.requests:
        by_case.setdefault(request.case_id, []).append(request)
    assert len({r.idempotency_key for r in by_case["a"]}) == 1 and len(by_case["a"]) == 4
    assert all(r.idempotency_shared for r in by_case["a"])
    assert len({r.idempotency_key for r in by_case["b"]}) == 4 and not any(r.idempotency_shared for r in by_case["b"])
    assert by_case["a"][0].idempotency_key == f"{shared.definition_hash}:a"


def test_a_provider_bug_fails_the_sample_visibly_with_secrets_redacted() -> None:
    provider = Scripted(lambda request: KeyError(f"choices for {KEY}"))
    outcome = _logic_run(provider, [("a", 2)], Sampling(samples=2), secrets=[KEY])
    assert len(outcome.samples) == 2 and len(provider.requests) == 2  # not retried
    assert all(s.error == "internal: KeyError: 'choices for ***'" for s in outcome.samples)


def test_every_text_a_provider_returns_is_redacted_before_it_becomes_a_sample() -> None:
    leaky = Completion(
        text=f"the key is {KEY}",
        model=f"model-{KEY}",
        fingerprint=f"fp_{KEY}",
        usage={"prompt_tokens": 3},
        finish_reason=f"stop {KEY}",
        logprobs=(TokenLogprob("the key", -0.1, runner_up=KEY, runner_up_logprob=-2.0), TokenLogprob(KEY, -0.2)),
    )
    outcome = _logic_run(Scripted(lambda request: leaky), [("a", 2)], Sampling(samples=2), secrets=[KEY])
    for sample in outcome.samples:
        assert (sample.text, sample.model, sample.fingerprint) == ("the key is ***", "model-***", "fp_***")
        assert sample.finish_reason == "stop ***" and sample.usage == {"prompt_tokens": 3}
        assert sample.logprobs == (TokenLogprob("the key", -0.1, "***", -2.0), TokenLogprob("***", -0.2))


def test_logprobs_that_spell_a_key_across_tokens_are_dropped() -> None:
    pieces = (TokenLogprob("key: ", -0.1), TokenLogprob(KEY[:8], -0.1), TokenLogprob(KEY[8:], -0.1))
    split = Completion(text=f"key: {KEY}", logprobs=pieces)
    outcome = _logic_run(Scripted(lambda request: split), [("a", 2)], Sampling(samples=2), secrets=[KEY])
    assert all(s.text == "key: ***" and s.logprobs is None for s in outcome.samples)


@pytest.mark.parametrize(
    "entries",
    [
        # The runner-ups alone spell the key, one piece each (issue 25, item 11).
        [("The", KEY[:6]), (" key", KEY[6:12]), (" is", KEY[12:]), (" secret", None)],
        # Tokens and runner-ups mixed, the key upper-cased.
        [("x", KEY[:5].upper()), (KEY[5:11].upper(), "y"), ("z", KEY[11:].upper())],
    ],
)
def test_logprob_runner_ups_that_spell_a_key_are_dropped(entries: list[tuple[str, str | None]]) -> None:
    pieces = tuple(TokenLogprob(token, -0.1, runner_up=other, runner_up_logprob=-2.0) for token, other in entries)
    completion = Completion(text="".join(token for token, _ in entries), logprobs=pieces)
    outcome = _logic_run(Scripted(lambda request: completion), [("a", 2)], Sampling(samples=2), secrets=[KEY])
    assert all(s.logprobs is None for s in outcome.samples)


def test_retryable_errors_become_the_sample_error_after_the_last_retry() -> None:
    provider = Scripted(lambda request: ProviderError("busy", retryable=True, kind="http_503"))
    outcome = _logic_run(provider, [("a", 2)], Sampling(samples=2, retries=3, max_requests=100))
    assert [s.error for s in outcome.samples] == ["http_503: busy"] * 2
    assert len(provider.requests) == 8 and outcome.retries == 6


def test_on_sample_errors_propagate() -> None:
    def explode(sample: Sample) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        _logic_run(Scripted(lambda request: "x"), [("a", 4)], Sampling(samples=4), recorder=explode)


def test_cancellation_returns_every_sample_already_handed_over() -> None:
    cancelled: list[int] = []

    async def three_answers(request: Request) -> str:
        if request.index >= 3:
            try:
                await asyncio.Event().wait()  # never answered: only the cancellation ends it
            except asyncio.CancelledError:
                cancelled.append(request.index)
                raise
        return "x"

    provider = Scripted(three_answers)
    config = ProviderConfig(type="openai", model="m")
    cases = [_case("a", "q", 10, config)]
    recorder = Recorder()

    async def go() -> SamplingOutcome:
        three_in = asyncio.Event()

        def on_sample(sample: Sample) -> None:
            recorder(sample)
            if len(recorder.samples) == 3:
                three_in.set()

        task = asyncio.create_task(
            sample_cases(cases, Sampling(samples=10, concurrency=2), {"a": provider}, on_sample=on_sample)
        )
        await three_in.wait()
        task.cancel()
        return await task

    outcome = asyncio.run(go())
    assert outcome.interrupted and outcome.samples == recorder.samples
    assert sorted(s.index for s in outcome.samples) == [0, 1, 2]
    assert sorted(cancelled) == [3, 4]  # both workers' requests were cancelled, not waited for


def test_latency_and_wall_time_are_read_from_the_clock() -> None:
    now = [0.0]
    tries: Counter[int] = Counter()

    async def slower_each_time(request: Request) -> Any:
        tries[request.index] += 1
        now[0] += (request.index + tries[request.index]) / 10  # request i's attempt k takes (i + k) tenths of a s
        return ProviderError("busy", retryable=True, kind="http_503") if tries[request.index] == 1 else "x"

    outcome = _logic_run(
        Scripted(slower_each_time), [("a", 3)], Sampling(samples=3, concurrency=1), clock=lambda: now[0]
    )
    assert [s.latency_ms for s in outcome.samples] == [200.0, 300.0, 400.0]  # the successful attempt's
    assert [s.attempts for s in outcome.samples] == [2, 2, 2] and outcome.wall_s == 1.5


def test_nothing_to_sample() -> None:
    outcome = _logic_run(Scripted(lambda request: "x"), [], Sampling())
    assert outcome.samples == [] and outcome.requests_made == 0


def test_a_case_without_a_provider_is_a_programming_error() -> None:
    config = ProviderConfig(type="openai", model="m")
    with pytest.raises(ValueError, match="no provider"):
        asyncio.run(sample_cases([_case("a", "q", 2, config)], Sampling(), {}, on_sample=lambda s: None))
