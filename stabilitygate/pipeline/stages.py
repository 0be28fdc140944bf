"""The adaptive pull-request run, check by check (docs/design.md §6, "Stages").

1. Every case draws up to its first check when it is compared with a baseline and may take a second
   stage (the look: half of `samples`), else all of `samples`.
2. At each check, `goes_on` says which of the cases still running draw more: those whose baseline's
   modal answer is not clearly as common now as before (judge/stages.py); they draw up to their next
   check, their indices continuing, until `max_samples` ends them.

Each step is one call of the sampler, appending to the same samples file, so `score` of that file
judges the run the same way: a case's path is read from its samples (`read_stages`). A compared
case's sampling never stops early for an absolute threshold: its test needs the samples its design
draws (a stop the test does not know of would make its p-value wrong).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.judge.stages import CasePath, StageDesign, design_for, path_of
from stabilitygate.report.model import SamplingFacts
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase

#: Draw the cases up to their `samples`, from `start[case id]` (0 when absent); first call: fresh file.
Draw = Callable[[Sequence[ResolvedCase], Mapping[str, int], bool], tuple[list[Sample], SamplingFacts]]
#: At a check: the ids of these cases (each holding the samples drawn so far) that draw more.
GoesOn = Callable[[Sequence[ResolvedCase], Sequence[Sample]], set[str]]


@dataclass(frozen=True)
class Staged:
    """What the stages drew, all of them; each case's path is read back from its indices (`read_stages`)."""

    samples: list[Sample]
    facts: SamplingFacts


def designs_of(cases: Sequence[ResolvedCase], baseline: Baseline | None) -> dict[str, StageDesign]:
    """Each case's design: adaptive when it is compared with its baseline."""
    return {c.id: design_for(c, _samples(baseline.entry_for(c) if baseline is not None else None)) for c in cases}


def _samples(entry: BaselineCase | None) -> int | None:
    return entry.samples if entry is not None else None


def draw_in_stages(cases: Sequence[ResolvedCase], baseline: Baseline | None, draw: Draw, goes_on: GoesOn) -> Staged:
    """Sample the cases check by check; a stage cut short (fatal error, budget, Ctrl-C) ends the run."""
    designs = designs_of(cases, baseline)
    held = {c.id: designs[c.id].next_size(0) if designs[c.id].adaptive else c.samples for c in cases}
    by_id = {c.id: c for c in cases}
    samples, facts = draw([_for_sampler(c, held[c.id], baseline) for c in cases], {}, False)
    parts = [facts]
    running = [cid for cid, d in designs.items() if d.adaptive and held[cid] < d.last]
    while running and not facts.could_not_measure:
        chosen = goes_on([by_id[cid] for cid in running], samples)
        running = [cid for cid in running if cid in chosen]
        if not running:
            break
        start = {cid: held[cid] for cid in running}
        held.update({cid: designs[cid].next_size(held[cid]) for cid in running})
        more, facts = draw([_for_sampler(by_id[cid], held[cid], baseline) for cid in running], start, True)
        samples, parts = samples + more, [*parts, facts]
        running = [cid for cid in running if held[cid] < designs[cid].last]
    return Staged(samples, _joined(parts))


def _for_sampler(case: ResolvedCase, n: int, baseline: Baseline | None) -> ResolvedCase:
    """The case as the sampler draws it: up to n, and, when compared, without the limits the sampler's
    early stop reads (docs/design.md §6, "Stages": a compared case's samples are its design's)."""
    update: dict[str, object] = {} if n == case.samples else {"samples": n}
    limits = case.thresholds
    compared = baseline is not None and baseline.entry_for(case) is not None
    if compared and (limits.max_unique or limits.min_mode_share):
        update["thresholds"] = limits.model_copy(update={"max_unique": None, "min_mode_share": None})
    return case.model_copy(update=update) if update else case


def _joined(parts: Sequence[SamplingFacts]) -> SamplingFacts:
    """The facts of the whole run: the stages' requests added up, the first stage's file and shard."""
    whole = SamplingFacts.merged(parts)
    return SamplingFacts(
        requests=whole.requests,
        retries=whole.retries,
        interrupted=whole.interrupted,
        budget_exhausted=whole.budget_exhausted,
        fatal_error=whole.fatal_error,
        early_stopped=whole.early_stopped,
        samples_file=parts[0].samples_file,
        shard=parts[0].shard,
        concurrency=whole.concurrency,
    )


def read_stages(
    cases: Sequence[ResolvedCase], samples: Sequence[Sample], baseline: Baseline | None, *, adaptive: bool
) -> tuple[dict[str, int], dict[str, CasePath]]:
    """How the run was sampled, from its samples alone (so `score` of a samples file agrees with the
    live run): each compared case's path, and the samples it planned at the stage it ended in."""
    drawn: dict[str, list[tuple[int, bool]]] = {}
    for sample in samples:
        drawn.setdefault(sample.case, []).append((sample.index, sample.text is not None))
    designs = designs_of(cases, baseline) if adaptive else {}
    planned: dict[str, int] = {}
    paths: dict[str, CasePath] = {}
    for case in cases:
        design = designs.get(case.id)
        if design is None or not design.adaptive or case.id not in drawn:
            continue
        path = path_of(design, drawn[case.id])
        paths[case.id] = path
        at_check = path.drawn in design.checks or path.drawn >= design.last
        planned[case.id] = path.drawn if at_check else design.next_size(path.drawn)
    return planned, paths


def held_so_far(samples: Sequence[Sample], case_id: str) -> int:
    """How many samples the case holds (its highest index + 1)."""
    return 1 + max((s.index for s in samples if s.case == case_id), default=-1)
