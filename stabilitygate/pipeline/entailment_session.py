"""Asking an entailment judge one ordered pair: recorded, cached, or one request through the sampler.

A question is a case of one sample handed to `sample_cases`, so it has the sampling timeout,
retries and backoff, and its reply is redacted like a completion; `concurrency` questions at most
are in flight. A judge's provider is built (and warmed up) only when a question is not answered by
the judgments recorded with the samples or by the cache, so scoring recorded samples needs neither
the judge nor its key. Every new judgment goes to the cache and to the judgments file at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stabilitygate.measure.entailment import Judgment, PairKey, entailment_prompt
from stabilitygate.measure.judgment_cache import JudgmentCache
from stabilitygate.measure.meaning import Pair
from stabilitygate.providers import make_provider
from stabilitygate.providers.interface import Provider
from stabilitygate.samples import Sample
from stabilitygate.sampling.judgments_file import append_judgment
from stabilitygate.sampling.sampler import sample_cases
from stabilitygate.suite.model import Message, ProviderConfig, ResolvedCase, Sampling, Thresholds

INTERRUPTED = "the run was interrupted"


class EntailmentFailed(Exception):
    """The judge could not answer a question after its retries: the case cannot be measured."""


def question_of(case: ResolvedCase) -> str:
    """The case's question as the prompt names it: its last user message."""
    users = [m.content for m in case.messages if m.role == "user"]
    return users[-1] if users else case.messages[-1].content


@dataclass
class EntailmentSession:
    """The judgments of one run and how to get a missing one; `asyncio.Lock`s bind to the running loop."""

    settings: Sampling
    environ: Mapping[str, str]
    secrets: tuple[str, ...] = ()
    cache: JudgmentCache | None = None
    record_to: Path | None = None  # the judgments file, appended to
    judgments: dict[PairKey, Judgment] = field(default_factory=dict)
    failures: dict[PairKey, str] = field(default_factory=dict)
    recorded: frozenset[PairKey] = frozenset()  # pairs the judgments file answered
    requests: int = 0  # questions sent, retries included
    from_cache: int = 0
    fatal: str | None = None
    interrupted: bool = False  # Ctrl-C or SIGTERM while a question was asked: nothing more is asked
    _providers: dict[str, Provider] = field(default_factory=dict)
    _gate: asyncio.Semaphore | None = None
    _starting: asyncio.Lock | None = None

    def judgment(self, key: PairKey) -> Judgment | None:
        """Known already: made or recorded, else in the cache."""
        found = self.judgments.get(key)
        if found is None and self.cache is not None:
            found = self.cache.get(key)
            if found is not None:
                self.judgments[key] = found
                self.from_cache += 1
        return found

    async def ask(self, case: ResolvedCase, key: PairKey, pair: Pair) -> Judgment:
        """The judgment of `pair` for `case`; EntailmentFailed (with the pair in `failures`) when it cannot be had."""
        known = self.judgment(key)
        if known is not None:
            return known
        if key in self.failures:
            raise EntailmentFailed(self.failures[key])
        if self.fatal is not None:
            raise self._fail(key, self.fatal)
        sample = await self._request(case, pair)
        if sample is None or sample.text is None:
            raise self._fail(key, (sample.error if sample is not None else self.fatal) or "no reply")
        judgment = Judgment.of_reply(sample.text, sample.usage)
        self.judgments[key] = judgment
        if self.cache is not None:
            self.cache.put(key, judgment)
        self._record(key, judgment, case.id)
        return judgment

    async def close(self) -> None:
        providers, self._providers = self._providers, {}
        for provider in providers.values():
            with contextlib.suppress(Exception):
                await provider.aclose()
        self._gate = self._starting = None  # the next loop makes its own

    async def _request(self, case: ResolvedCase, pair: Pair) -> Sample | None:
        judge = case.entailment_judge
        assert judge is not None
        question = _question_case(case, judge, entailment_prompt(question_of(case), *pair))
        provider = await self._provider(judge)
        got: list[Sample] = []
        self._gate = self._gate or asyncio.Semaphore(self.settings.concurrency)
        async with self._gate:
            if self.fatal is not None:  # refused while this question waited for its turn
                return None
            outcome = await sample_cases(
                [question], _one_question(self.settings), {question.id: provider}, on_sample=got.append,
                secrets=self.secrets,
            )  # fmt: skip
        self.requests += outcome.requests_made
        if outcome.interrupted:  # the sampler kept what it had and stopped: so does the judge
            self.interrupt()
        elif outcome.fatal_error is not None:
            self.fatal = outcome.fatal_error  # a refused key refuses every question: ask no more
        return got[0] if got else None

    async def _provider(self, judge: ProviderConfig) -> Provider:
        config = judge.model_dump_json()
        self._starting = self._starting or asyncio.Lock()
        async with self._starting:
            if config not in self._providers:
                provider = make_provider(
                    judge, environ=self.environ, timeout_s=self.settings.timeout_s, run_secrets=self.secrets
                )
                self._providers[config] = provider
                await provider.warm_up()
        return self._providers[config]

    def interrupt(self) -> None:
        """The run was interrupted while the judge was asked: no question is asked after this one."""
        self.interrupted, self.fatal = True, INTERRUPTED

    def _fail(self, key: PairKey, why: str) -> EntailmentFailed:
        self.failures[key] = f"the judge failed after its retries: {why}"
        return EntailmentFailed(self.failures[key])

    def _record(self, key: PairKey, judgment: Judgment, case_id: str) -> None:
        if self.record_to is not None:
            append_judgment(self.record_to, key, judgment, case_id)


def _question_case(case: ResolvedCase, judge: ProviderConfig, prompt: str) -> ResolvedCase:
    """One question to the judge as the sampler takes work: a case of one sample."""
    return ResolvedCase(
        id=f"{case.id}:judge",
        line=case.line,
        messages=(Message(role="user", content=prompt),),
        provider=judge,
        thresholds=Thresholds(),
        answer=None,
        expected=None,
        samples=1,
    )


def _one_question(settings: Sampling) -> Sampling:
    """The sampling settings for one question: its retries, and a budget of exactly those attempts."""
    return settings.model_copy(update={"max_requests": settings.retries + 1, "early_stop": False})
