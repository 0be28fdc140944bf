"""Drawing a run with `sampling.probe: concurrency`: the probed halves alone first, then everything else.

The first half of every case's samples is drawn one request at a time (concurrency 1, nothing else
in flight), then the run goes on as it would, its sampler continuing those cases from the half at
the run's concurrency (judge/probe.py reads the two halves back by index; docs/design.md §16).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from stabilitygate.conditions import Probe
from stabilitygate.judge.probe import half_of, probed_cases
from stabilitygate.pipeline.stages import Draw, Staged
from stabilitygate.report.model import SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase

#: Draw these cases from `start` at this concurrency (None: the run's own).
DrawAt = Callable[[Sequence[ResolvedCase], Mapping[str, int], bool, int | None], tuple[list[Sample], SamplingFacts]]
#: The run's own sampling (one stage, or the stages of a pull request) with the given draw.
Sampling = Callable[[Draw], Staged]


def draw_with_probe(cases: Sequence[ResolvedCase], probe: Probe | None, draw: DrawAt, sampling: Sampling) -> Staged:
    """The run's samples: with the probe on, each case's first half alone, then the run as usual."""
    probed = probed_cases(cases, probe)
    if not probed:
        return sampling(lambda some, start, append: draw(some, start, append, None))
    halves = {c.id: half_of(c) for c in probed}
    alone, facts = draw([c.model_copy(update={"samples": halves[c.id]}) for c in probed], {}, False, 1)
    if facts.could_not_measure:
        return Staged(alone, facts)

    def go_on(
        some: Sequence[ResolvedCase], start: Mapping[str, int], append: bool
    ) -> tuple[list[Sample], SamplingFacts]:
        return draw(some, {**halves, **start}, True, None)

    rest = sampling(go_on)
    return Staged(alone + rest.samples, _joined(facts, rest.facts))


def _joined(alone: SamplingFacts, rest: SamplingFacts) -> SamplingFacts:
    """The facts of the whole run: requests added up, the file and shard of the run's own sampling."""
    return replace(SamplingFacts.merged([alone, rest]), samples_file=rest.samples_file, shard=rest.shard)
