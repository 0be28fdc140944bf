"""`sampling.probe: concurrency`: do a case's answers depend on how many requests the server serves at once?

The first half of each probed case's samples (indices below N/2) is drawn one at a time, the rest
under the run's concurrency (pipeline/probe.py), so the samples alone say which half a sample is
in and `score` reads the probe back. The test asks whether the alone half's most common answer is
rarer under load: the answer-change rule of the case's exact test (judge/case_test.py), whose
statistic picks that answer afresh in every split of the pooled answers, so choosing it from the
alone half does not make the test cry wolf. The probes of
a run are one Holm family of their own; a probe reports, it never fails the gate
(docs/design.md §16, "The concurrency probe").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from stabilitygate.conditions import Probe
from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.discrete import holm
from stabilitygate.judge.pool import Counted, Runs, pool_of
from stabilitygate.measure.parsers import parse_answer
from stabilitygate.remedies import ProbeResult
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ResolvedCase


def probe_results(
    cases: Sequence[ResolvedCase],
    samples: Sequence[Sample],
    *,
    alpha: float,
) -> dict[str, ProbeResult]:
    """Every case's probe, by id, with the family's Holm correction applied."""
    by_case: dict[str, list[Sample]] = {}
    for sample in samples:
        by_case.setdefault(sample.case, []).append(sample)
    raw = {c.id: _probe(c, by_case.get(c.id, [])) for c in cases}
    tested = [cid for cid, probe in raw.items() if probe.p_value is not None]
    adjusted = dict(zip(tested, holm([raw[cid].p_value or 1.0 for cid in tested]), strict=True))
    return {
        cid: replace(probe, p_holm=adjusted.get(cid), depends=adjusted.get(cid, 1.0) < alpha)
        for cid, probe in raw.items()
    }


def half_of(case: ResolvedCase) -> int:
    """How many of the case's samples are drawn one at a time."""
    return case.samples // 2


def _probe(case: ResolvedCase, samples: Sequence[Sample]) -> ProbeResult:
    half = half_of(case)
    alone = [_answer(case, s) for s in samples if s.text is not None and s.index < half]
    loaded = [_answer(case, s) for s in samples if s.text is not None and half <= s.index < case.samples]
    counts_alone = Counter(a for a in alone if a is not None)
    counts_loaded = Counter(a for a in loaded if a is not None)
    order = sorted(set(counts_alone) | set(counts_loaded), key=lambda a: (-counts_alone[a], a))
    modal = order[0] if order and counts_alone[order[0]] else None
    return ProbeResult(
        compared="answers" if case.answer is not None else "completions",
        alone=len(alone),
        under_load=len(loaded),
        alone_distinct=_distinct(alone),
        under_load_distinct=_distinct(loaded),
        modal_alone=counts_alone[modal] if modal is not None else 0,
        modal_under_load=counts_loaded[modal] if modal is not None else 0,
        p_value=_rarer_under_load_p(counts_alone, counts_loaded, alone, loaded) if modal is not None else None,
        p_holm=None,
        depends=False,
        alone_unparsed=alone.count(None),
        under_load_unparsed=loaded.count(None),
    )


def _rarer_under_load_p(
    counts_alone: Counter[str], counts_loaded: Counter[str], alone: Sequence[str | None], loaded: Sequence[str | None]
) -> float | None:
    """Is the alone half's most common answer rarer under load? None when nothing could differ."""
    runs = Runs(
        before=[Counted(a, n) for a, n in counts_alone.items()],
        now=[Counted(a, n) for a, n in counts_loaded.items()],
        n_before=len(alone),
        n_now=len(loaded),
        failures=(alone.count(None), loaded.count(None)),
    )
    pool = pool_of(runs, lambda a, b: bool(a == b))
    if sum(1 for n in pool.pooled if n) < 2:
        return None
    return case_test(pool, ["answer"]).rules["answer"].own


def _answer(case: ResolvedCase, sample: Sample) -> str | None:
    """What the probe compares: the parsed answer as canonical JSON (None: no parse), else the text."""
    assert sample.text is not None
    if case.answer is None:
        return sample.text
    parsed = parse_answer(case.answer, sample.text)
    return json.dumps(parsed.value, sort_keys=True, ensure_ascii=False) if parsed.ok else None


def _distinct(values: Sequence[str | None]) -> int:
    """Distinct answers among those that parsed: a failed parse is no answer (it is counted apart)."""
    return len({v for v in values if v is not None})


def probed_cases(cases: Sequence[ResolvedCase], probe: Probe | None) -> list[ResolvedCase]:
    """The cases the probe applies to: every case with two samples or more, when it is on."""
    return [c for c in cases if probe == "concurrency" and half_of(c) >= 1]


__all__ = ["half_of", "probe_results", "probed_cases"]
