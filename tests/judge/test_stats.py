"""The statistics of one split, each a fall from the baseline to the run over n_b * n_c."""

from __future__ import annotations

import numpy as np

from stabilitygate.judge.stats import split_stats


def rows(*baseline: tuple[int, ...]) -> np.ndarray:
    return np.asarray(baseline, dtype=np.int64)


def test_the_three_statistics_of_a_split() -> None:
    # Classes: answers A, B (by key), singles, failures; pooled 12, 6, 1, 1; baseline of 10, run of 10.
    pooled = (12, 6, 1, 1)
    s = split_stats(pooled, rows((8, 1, 1, 0), (4, 5, 0, 1)))
    # Split 1: baseline mode A 8/10; run A 4, B 5 (mode 5), failure 1.
    assert s.drop[0] == 8 * 10 - 5 * 10 and s.guard[0] == 8 * 10 - 4 * 10 and s.parsed[0] == 1 * 10 - 0 * 10
    # Split 2: baseline mode B 5/10 (A 4); run A 8/10: the baseline's modal answer B is rarer now (1/10).
    assert s.modal_before[1] == 5 and s.modal_now[1] == 1
    assert s.guard[1] == 5 * 10 - 1 * 10 and s.drop[1] == 5 * 10 - 8 * 10 and s.parsed[1] == 0 - 10


def test_ties_go_to_the_first_answer_by_key_and_singles_are_modes_of_one() -> None:
    pooled = (4, 4, 3, 0)
    tie = split_stats(pooled, rows((2, 2, 1, 0)))
    assert tie.modal_before[0] == 2 and tie.modal_now[0] == 2  # the first answer: 2 of 4 remain now
    only_singles = split_stats((2, 0, 5, 0), rows((0, 0, 3, 0)))
    assert only_singles.modal_before[0] == 1 and only_singles.modal_now[0] == 0
    nothing = split_stats((0, 0, 0, 6), rows((0, 0, 0, 3)))
    assert nothing.modal_before[0] == 0 and nothing.drop[0] == 0
