"""The statistics of one split of a case's pooled answers, one per rule that can fail the case.

Each is a fall from the baseline to the run, as an integer numerator over n_b * n_c, so that ties
between splits are exact (docs/design.md §6, "The case's test"):

- `drop`: the primary agreement, each run's own modal share (its largest answer, or 1 for a run of
  answers given once; failures are never a mode);
- `guard`: the share of the baseline's modal answer (ties: the first by canonical key; a single
  last), in the baseline and now: the answer-change and meaning-drift rules' statistic, with the
  modal picked afresh in every split, so that picking it is part of the null distribution;
- `parsed`: the share of samples whose answer parsed.

The columns of `baseline` are a pool's classes (judge/pool.py): its answers by key, then the
singles, then the failures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stabilitygate.judge.exact import Ints

Statistic = Literal["drop", "guard", "parsed"]


@dataclass(frozen=True)
class SplitStats:
    """Each split's statistics, and its baseline's modal answer's count in either run."""

    drop: Ints
    guard: Ints
    parsed: Ints
    modal_before: Ints  # the baseline's modal count (0 when it has no answer at all)
    modal_now: Ints  # that answer's count now

    def of(self, statistic: Statistic) -> Ints:
        return {"drop": self.drop, "guard": self.guard, "parsed": self.parsed}[statistic]


def split_stats(pooled: Sequence[int], baseline: Ints) -> SplitStats:
    """The statistics of every split (rows of `baseline`, columns the pool's classes)."""
    pooled_arr = np.asarray(pooled, dtype=np.int64)
    current = pooled_arr[None, :] - baseline
    n_b, n_c = int(baseline[0].sum()), int(current[0].sum())
    answers_b, answers_c = baseline[:, :-2], current[:, :-2]
    singles_b, singles_c = baseline[:, -2], current[:, -2]
    top_b = answers_b.max(axis=1, initial=0)
    mode_b = np.maximum(top_b, np.minimum(singles_b, 1))
    mode_c = np.maximum(answers_c.max(axis=1, initial=0), np.minimum(singles_c, 1))
    # The baseline's modal answer: the first largest answer (by key), else one of its singles.
    has_answer = top_b >= 1
    first = answers_b.argmax(axis=1) if answers_b.shape[1] else np.zeros(len(baseline), dtype=np.int64)
    rows = np.arange(len(baseline))
    now_of_first = answers_c[rows, first] if answers_b.shape[1] else np.zeros(len(baseline), dtype=np.int64)
    modal_now = np.where(has_answer, now_of_first, 0)
    return SplitStats(
        drop=mode_b * n_c - mode_c * n_b,
        guard=mode_b * n_c - modal_now * n_b,
        parsed=current[:, -1] * n_b - baseline[:, -1] * n_c,
        modal_before=mode_b,
        modal_now=modal_now,
    )
