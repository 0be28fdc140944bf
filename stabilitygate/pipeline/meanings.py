"""The entailment judges' part of a run: one step before each stage is measured (docs/design.md §5).

Each judged case drives the clustering of `measure/meaning.py` with its judge (`entailment_session.py`
gets each judgment: recorded, cached or asked), the cases concurrently. When the baseline has the
case, the pairs the case's test and the meaning-drift rule need are asked as well (`drift_steps`: the
baseline's top completions and the current ones grouped as `judge/pool.py` groups them). The step
returns `Meanings`, whose judgments are a read-only table: measuring and judging only look pairs up,
and a pair missing from it makes the case an error, never a question asked from inside measuring.
A run with checks (pipeline/stages.py) takes the step before each check, on the samples so far, with
one `EntailmentSession`, so no pair is asked twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.measure.agreement import ranked
from stabilitygate.measure.case import distinct_texts
from stabilitygate.measure.entailment import Judgment, PairKey, entailment_key
from stabilitygate.measure.judgment_cache import JudgmentCache
from stabilitygate.measure.meaning import JudgmentLookup, Pair, cluster_steps, drive, same_meaning_steps
from stabilitygate.pipeline.entailment_session import EntailmentFailed, EntailmentSession
from stabilitygate.samples import Sample
from stabilitygate.sampling.judgments_file import judgments_path, read_judgments, start_judgments_file
from stabilitygate.suite.model import ResolvedCase, Sampling

T = TypeVar("T")
log = logging.getLogger("stabilitygate")
SameMeaning = Callable[[str, str], bool]


@dataclass(frozen=True)
class EntailmentCost:
    """What one case's meanings rest on: judgments (= requests a run with an empty cache makes) and tokens."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    unreadable: tuple[tuple[str, int], ...] = ()  # replies that named no label, and how often

    @classmethod
    def of(cls, used: Iterable[Judgment]) -> EntailmentCost:
        judgments = list(used)
        replies: dict[str, int] = defaultdict(int)
        for judgment in judgments:
            if judgment.label is None:
                replies[judgment.reply] += 1
        return cls(
            calls=len(judgments),
            prompt_tokens=sum(j.usage.get("prompt_tokens", 0) for j in judgments),
            completion_tokens=sum(j.usage.get("completion_tokens", 0) for j in judgments),
            unreadable=tuple(sorted(replies.items(), key=lambda kv: (-kv[1], kv[0]))),
        )


@dataclass
class Meanings:
    """The judged cases of a run: their judge keys, what each case's numbers used, which failed, and
    the judgments themselves, a read-only table once the step is over."""

    session: EntailmentSession
    cases: dict[str, ResolvedCase] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # case id -> judge key
    costs: dict[str, EntailmentCost] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)  # case id -> why its meanings cannot be measured
    used: set[PairKey] = field(default_factory=set)
    judgments: Mapping[PairKey, Judgment] = field(default_factory=lambda: MappingProxyType({}))
    failures: Mapping[PairKey, str] = field(default_factory=lambda: MappingProxyType({}))

    def lookup(self, case_id: str) -> JudgmentLookup | None:
        """The judgments `measure_case` clusters the case with: a pair missing from them is a
        measurement error of the case (MissingJudgment), never asked then."""
        key = self.keys.get(case_id)
        if key is None:
            return None
        return JudgmentLookup(key, self.judgments, self.failures)

    def same_meaning_by_case(self) -> dict[str, SameMeaning]:
        """For the case's test and the drift rule: each judged case's "do these two mean the same"."""
        return {case_id: self._same_meaning(case_id) for case_id in self.keys}

    def _same_meaning(self, case_id: str) -> SameMeaning:
        def entails(pair: Pair) -> bool:
            pair_key = PairKey.of(self.keys[case_id], *pair)
            judgment = self.judgments.get(pair_key)
            if judgment is None:  # the judging step asked every pair the verdicts need: the judge failed
                why = self.failures.get(pair_key, "no judgment of a pair the verdict needs")
                self.failed.setdefault(case_id, why)
                return False
            return judgment.entails

        return lambda a, b: drive(same_meaning_steps(a, b), entails)

    @property
    def from_record(self) -> int:
        return len(self.used & self.session.recorded)

    def frozen(self) -> Meanings:
        """The step's result: the session's judgments so far, as read-only tables."""
        self.judgments = MappingProxyType(dict(self.session.judgments))
        self.failures = MappingProxyType(dict(self.session.failures))
        return self


async def _closing(session: EntailmentSession, work: Awaitable[T]) -> T:
    try:
        return await work
    finally:
        await session.close()


def case_entailment_key(case: ResolvedCase) -> str:
    assert case.entailment_judge is not None
    return entailment_key(case.entailment_judge.identity(), [m.model_dump() for m in case.messages])


def drift_steps(modal_before: str | None, before: Sequence[str], now: Sequence[str]) -> Generator[Pair, bool, None]:
    """The pairs the meaning-drift rule asks (`judge/compare.py`): the two modal completions, then the
    baseline's rows and the current ones grouped, each joining the first group whose first member
    means the same."""
    if modal_before is not None and now:
        yield from same_meaning_steps(now[0], modal_before)
    leaders: list[str] = []
    for value in [*before, *now]:
        for leader in leaders:
            if (yield from same_meaning_steps(value, leader)):
                break
        else:
            leaders.append(value)


async def _drive(steps: Generator[Pair, bool, T], entails: Callable[[Pair], Awaitable[bool]]) -> T:
    """`measure.meaning.drive`, answering each pair with an awaited question."""
    try:
        pair = next(steps)
        while True:
            pair = steps.send(await entails(pair))
    except StopIteration as stop:
        value: T = stop.value
        return value


async def _cluster_case(
    meanings: Meanings, case: ResolvedCase, counts: Mapping[str, int], entry: BaselineCase | None
) -> None:
    key = meanings.keys[case.id]
    used: dict[PairKey, Judgment] = {}

    async def entails(pair: Pair) -> bool:
        pair_key = PairKey.of(key, *pair)
        judgment = await meanings.session.ask(case, pair_key, pair)
        used[pair_key] = judgment
        return judgment.entails

    try:
        await _drive(cluster_steps(counts), entails)
        if entry is not None and case.answer is None and entry.completions:
            now = [text for text, _ in ranked(counts)]
            before = [r.text for r in entry.completions]
            await _drive(drift_steps(entry.modal_completion, before, now), entails)
    except EntailmentFailed as exc:
        meanings.failed[case.id] = str(exc)
    meanings.costs[case.id] = EntailmentCost.of(used.values())
    meanings.used |= set(used)


def entailment_meanings(
    cases: Sequence[ResolvedCase],
    samples: Iterable[Sample],
    session: EntailmentSession,
    *,
    baseline: Baseline | None = None,
) -> Meanings:
    """The judgments every case with a judge needs, asked concurrently; failures stay in `failed`."""
    meanings = Meanings(session)
    judged = [case for case in cases if case.entailment_judge is not None]
    by_case: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_case[sample.case].append(sample)
    work = []
    for case in judged:
        meanings.cases[case.id], meanings.keys[case.id] = case, case_entailment_key(case)
        counts = distinct_texts(by_case.get(case.id, []))
        if counts:
            entry = baseline.entry_for(case) if baseline is not None else None
            work.append(_cluster_case(meanings, case, counts, entry))

    async def cluster_all() -> None:
        await asyncio.gather(*work)

    if work:
        try:
            asyncio.run(_closing(session, cluster_all()))
        except KeyboardInterrupt:  # Ctrl-C while judging: what was judged is kept (and recorded)
            session.interrupt()  # and nothing more is asked
    if session.interrupted:
        log.warning("interrupted while asking the entailment judge")
        for case in judged:  # a question cut short by the interruption failed because of it
            if case.id not in meanings.costs or case.id in meanings.failed:
                meanings.failed[case.id] = "the run was interrupted while the judge was being asked"
    return meanings.frozen()


@dataclass(frozen=True)
class JudgingSteps:
    """The judging steps of one run: one session (so no pair is asked twice), one judgments file."""

    session: EntailmentSession

    def step(
        self, cases: Sequence[ResolvedCase], samples: Iterable[Sample], baseline: Baseline | None = None
    ) -> Meanings | None:
        """The judgments these cases' samples need, asked before they are measured; None without judges."""
        if not any(case.entailment_judge is not None for case in cases):
            return None
        meanings = entailment_meanings(cases, samples, self.session, baseline=baseline)
        log.info(
            "entailment judge: %d judgments used, %d from the judgments file, %d from the cache, %d requests sent",
            len(meanings.used), meanings.from_record, self.session.from_cache, self.session.requests,
        )  # fmt: skip
        return meanings


def judging_steps(
    cases: Sequence[ResolvedCase],
    *,
    settings: Sampling,
    environ: Mapping[str, str],
    secrets: Sequence[str] = (),
    cache_dir: str | None = None,
    samples_out: Path | None = None,
    recorded: Mapping[PairKey, Judgment] | None = None,
) -> JudgingSteps | None:
    """The run's judging steps, with its cache and its judgments file beside `samples_out`; None
    when no case has a judge."""
    if not any(case.entailment_judge is not None for case in cases):
        return None
    record_to = judgments_path(samples_out) if samples_out is not None else None
    if record_to is not None:
        start_judgments_file(record_to)
    session = EntailmentSession(
        settings, environ, tuple(s for s in secrets if s), JudgmentCache.at(cache_dir), record_to,
        judgments=dict(recorded or {}), recorded=frozenset(recorded or {}),
    )  # fmt: skip
    return JudgingSteps(session)


def meanings_of(
    cases: Sequence[ResolvedCase],
    samples: Iterable[Sample],
    *,
    settings: Sampling,
    environ: Mapping[str, str],
    secrets: Sequence[str] = (),
    baseline: Baseline | None = None,
    cache_dir: str | None = None,
    samples_out: Path | None = None,
    recorded: Mapping[PairKey, Judgment] | None = None,
) -> Meanings | None:
    """One judging step over all the samples (scoring a samples file); None without judges."""
    steps = judging_steps(
        cases, settings=settings, environ=environ, secrets=secrets, cache_dir=cache_dir,
        samples_out=samples_out, recorded=recorded,
    )  # fmt: skip
    return steps.step(cases, samples, baseline) if steps is not None else None


def recorded_judgments(samples_files: Iterable[Path]) -> dict[PairKey, Judgment]:
    """The judgments recorded beside these samples files (none for a file without them)."""
    found: dict[PairKey, Judgment] = {}
    for path in samples_files:
        found.update(read_judgments(judgments_path(path)))
    return found
