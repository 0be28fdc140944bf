"""The adaptive pull-request run, stage by stage (docs/design.md §6, "Stages").

1. Every case draws its look (half of `samples`) when it is compared with a baseline and may take a
   second stage, else all of `samples`.
2. A case whose look was unanimous with its baseline's most common answer stops; the others draw
   the rest of `samples`, their indices continuing.
3. The cases whose first stage left a test inconclusive (`goes_on`) draw up to `max_samples`.

Each step is one call of the sampler, appending to the same samples file, so `score` of that file
judges the run the same way: a case's stage is read from how many samples it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stabilitygate.against_baseline import Compared
from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.judge.stages import StagedRun, after_first_stage, design_for, look_says_unchanged
from stabilitygate.measure.parsers import parse_answer
from stabilitygate.report.model import SamplingFacts
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase

#: Draw the cases up to their `samples`, from `start[case id]` (0 when absent); first call: fresh file.
Draw = Callable[[Sequence[ResolvedCase], Mapping[str, int], bool], tuple[list[Sample], SamplingFacts]]
#: After the first stage: the ids of the cases whose tests are inconclusive.
GoesOn = Callable[[Sequence[Sample]], set[str]]


@dataclass(frozen=True)
class Staged:
    """What the stages drew, all of them; each case's stage is read back from its indices (`read_stages`)."""

    samples: list[Sample]
    facts: SamplingFacts


def compared_entry(case: ResolvedCase, baseline: Baseline | None) -> BaselineCase | None:
    entry = baseline.cases.get(case.id) if baseline is not None else None
    return entry if entry is not None and entry.hash == case.definition_hash else None


def draw_in_stages(cases: Sequence[ResolvedCase], baseline: Baseline | None, draw: Draw, goes_on: GoesOn) -> Staged:
    """Sample the cases stage by stage; a stage cut short (fatal error, budget, Ctrl-C) ends the run."""
    designs = {c.id: design_for(c, compared_entry(c, baseline) is not None) for c in cases}
    looks = {cid: d.look for cid, d in designs.items() if d.look is not None}
    samples, facts = draw([_up_to(c, looks.get(c.id, c.samples)) for c in cases], {}, False)
    parts = [facts]
    rest = [c for c in cases if c.id in looks and not _unanimous(c, baseline, samples, looks[c.id])]
    if rest and not facts.could_not_measure:
        more, facts = draw(rest, {c.id: looks[c.id] for c in rest}, True)
        samples, parts = samples + more, [*parts, facts]
    chosen = goes_on(samples) if not facts.could_not_measure else set()
    second = [_up_to(c, designs[c.id].last) for c in cases if c.id in chosen and designs[c.id].adaptive]
    if second:
        more, facts = draw(second, {c.id: designs[c.id].first for c in second}, True)
        samples, parts = samples + more, [*parts, facts]
    return Staged(samples, _joined(parts))


def _up_to(case: ResolvedCase, n: int) -> ResolvedCase:
    return case if n == case.samples else case.model_copy(update={"samples": n})


def _unanimous(case: ResolvedCase, baseline: Baseline | None, samples: Sequence[Sample], look: int) -> bool:
    """Every one of the case's first `look` samples gave its baseline's most common answer."""
    entry = compared_entry(case, baseline)
    if entry is None:
        return False
    mine = sorted((s for s in samples if s.case == case.id and s.index < look), key=lambda s: s.index)
    if [s.index for s in mine] != list(range(look)):
        return False
    if case.answer is None:
        return look_says_unchanged([s.text for s in mine], entry.modal_completion, look)
    spec = case.answer
    return look_says_unchanged([_answer(spec, s.text) for s in mine], entry.modal_answer, look)


def _answer(spec: Any, text: str | None) -> Any:
    if text is None:
        return None
    parsed = parse_answer(spec, text)
    return parsed.value if parsed.ok else None


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


Measure = Callable[[Sequence[ResolvedCase], Sequence[Sample], Mapping[str, int]], list[CaseMeasurement]]


def read_stages(
    cases: Sequence[ResolvedCase],
    samples: Sequence[Sample],
    baseline: Baseline | None,
    *,
    adaptive: bool,
    measure: Measure,
) -> tuple[dict[str, int], StagedRun]:
    """How the run was sampled, from its samples alone (so `score` of a samples file agrees with the
    live run): each compared case's stage from its highest index, the samples it planned at that
    stage, and the first-stage measurement of the cases that took a second stage."""
    last: dict[str, int] = {}
    for sample in samples:
        last[sample.case] = max(last.get(sample.case, -1), sample.index)
    planned: dict[str, int] = {}
    looked: set[str] = set()
    second: list[ResolvedCase] = []
    for case in cases:
        design = design_for(case, adaptive and compared_entry(case, baseline) is not None)
        if not design.adaptive or case.id not in last:
            continue
        stage = design.stage_of(last[case.id] + 1)
        planned[case.id] = {"look": design.look or case.samples, "first": case.samples, "second": design.last}[stage]
        looked.update([case.id] if stage == "look" else [])
        second.extend([case] if stage == "second" else [])
    sizes = {c.id: c.samples for c in second}
    early = [s for s in samples if s.index < sizes.get(s.case, 0)]
    first = measure(second, early, sizes) if second else []
    return planned, StagedRun({m.id: m for m in first}, frozenset(looked), adaptive)


#: Judge these cases on these samples (their first stage), as `judge_cases` does.
JudgeStage = Callable[[Sequence[ResolvedCase], Sequence[Sample], StagedRun], list[CaseVerdict]]


def inconclusive(
    cases: Sequence[ResolvedCase], samples: Sequence[Sample], baseline: Baseline | None, judge: JudgeStage
) -> set[str]:
    """The compared cases whose first stage neither failed them nor cleared them (judge/stages.py).

    Every case is judged, as the whole run will be, so that the family (and each case's level) is the
    one the final verdicts use: the cases stopped at the look are in it, unable to fail."""
    adaptive = {c.id: design_for(c, True) for c in cases if compared_entry(c, baseline) is not None}
    adaptive = {cid: d for cid, d in adaptive.items() if d.adaptive}
    if not adaptive:  # no case may take a second stage: nothing to judge yet
        return set()
    looked = frozenset(cid for cid, d in adaptive.items() if d.look is not None and _drawn(samples, cid) <= d.look)
    chosen = set()
    for verdict in judge(cases, samples, StagedRun({}, looked, True)):
        if verdict.id not in adaptive or verdict.id in looked:
            continue
        record = verdict.baseline
        raw = (record.p_value, record.answer_p_value, record.meaning_p_value) if isinstance(record, Compared) else ()
        p_values = [p for p in raw if p is not None]
        decided = verdict.verdict in ("fail", "error", "new")
        if after_first_stage(p_values, rejected=verdict.verdict == "regressed", decided=decided) == "more":
            chosen.add(verdict.id)
    return chosen


def _drawn(samples: Sequence[Sample], case_id: str) -> int:
    return 1 + max((s.index for s in samples if s.case == case_id), default=-1)
