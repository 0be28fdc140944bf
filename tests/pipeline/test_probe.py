"""Drawing with the probe: the first halves alone at concurrency 1, then the run continuing from them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from stabilitygate.pipeline.probe import draw_with_probe
from stabilitygate.pipeline.stages import Draw, Staged
from stabilitygate.report.model import SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.suite.model import Message, ProviderConfig, ResolvedCase, Thresholds


def case(case_id: str, samples: int) -> ResolvedCase:
    return ResolvedCase(
        id=case_id, line=None, messages=(Message(role="user", content="p"),),
        provider=ProviderConfig(type="openai", model="m"), thresholds=Thresholds(), answer=None, expected=None,
        samples=samples,
    )  # fmt: skip


class Drawer:
    """A draw that records each call and returns one sample per index drawn."""

    def __init__(self, fatal_first: bool = False) -> None:
        self.calls: list[tuple[dict[str, int], dict[str, int], bool, int | None]] = []
        self.fatal_first = fatal_first

    def __call__(
        self, cases: Sequence[ResolvedCase], start: Mapping[str, int], append: bool, concurrency: int | None
    ) -> tuple[list[Sample], SamplingFacts]:
        self.calls.append(({c.id: c.samples for c in cases}, dict(start), append, concurrency))
        drawn = [Sample(case=c.id, index=i, text="x") for c in cases for i in range(start.get(c.id, 0), c.samples)]
        fatal = "401" if self.fatal_first and len(self.calls) == 1 else None
        facts = SamplingFacts(
            requests=len(drawn), retries=0, interrupted=False, budget_exhausted=False, fatal_error=fatal,
            samples_file="run.jsonl", concurrency=concurrency or 8,
        )  # fmt: skip
        return drawn, facts


def one_stage(cases: Sequence[ResolvedCase]) -> Callable[[Draw], Staged]:
    def sampling(draw: Draw) -> Staged:
        return Staged(*draw(cases, {}, False))

    return sampling


def test_without_the_probe_the_run_samples_as_it_always_did() -> None:
    drawer, cases = Drawer(), [case("a", 10)]
    staged = draw_with_probe(cases, None, drawer, one_stage(cases))
    assert drawer.calls == [({"a": 10}, {}, False, None)] and len(staged.samples) == 10


def test_with_the_probe_the_first_halves_go_alone_then_the_run_continues_from_them() -> None:
    drawer, cases = Drawer(), [case("a", 10), case("b", 7)]
    staged = draw_with_probe(cases, "concurrency", drawer, one_stage(cases))
    assert drawer.calls == [
        ({"a": 5, "b": 3}, {}, False, 1),  # a fresh samples file, one request at a time
        ({"a": 10, "b": 7}, {"a": 5, "b": 3}, True, None),  # appended, at the run's concurrency
    ]
    assert sorted((s.case, s.index) for s in staged.samples) == [("a", i) for i in range(10)] + [
        ("b", i) for i in range(7)
    ]
    assert staged.facts.requests == 17 and staged.facts.concurrency == 8 and staged.facts.samples_file == "run.jsonl"


def test_a_first_half_that_cannot_measure_ends_the_run() -> None:
    drawer, cases = Drawer(fatal_first=True), [case("a", 10)]
    staged = draw_with_probe(cases, "concurrency", drawer, one_stage(cases))
    assert len(drawer.calls) == 1 and staged.facts.fatal_error == "401" and len(staged.samples) == 5
