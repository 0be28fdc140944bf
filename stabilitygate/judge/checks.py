"""A compared case checked on its samples so far: does it draw more? (docs/design.md §6, "Stages")

The case's answers are pooled with its baseline's exactly as its test will pool them (judge/pool.py),
so the baseline's modal answer and its count now are the ones the test's weighting of the splits
assumes (judge/stages.py, `goes_on`).
"""

from __future__ import annotations

import numpy as np

from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.compare import SameMeaning, Similarity, compare_case
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.stages import StageDesign, goes_on
from stabilitygate.judge.stats import split_stats
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ResolvedCase


def modal_counts(pool: Pool) -> tuple[int, int]:
    """The baseline's modal count and that answer's count now, as the test's statistics pick it."""
    stats = split_stats(pool.pooled, np.asarray([pool.observed], dtype=np.int64))
    return int(stats.modal_before[0]), int(stats.modal_now[0])


def draws_more(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    design: StageDesign,
    check: int,
    *,
    similarity: Similarity | None = None,
    same_meaning: SameMeaning | None = None,
) -> bool:
    """Whether the case, measured on its first `check` samples (`m`), goes on to its next check."""
    pool = compare_case(
        case, m, entry, primary_agreement(case, m), similarity=similarity, same_meaning=same_meaning
    ).pool
    before, now = modal_counts(pool)
    return goes_on(design, check, before, pool.n_baseline, now, pool.n_current)
