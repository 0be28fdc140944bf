"""A case's answers pooled: aligned across the runs, answers given once as singles, failures apart."""

from __future__ import annotations

from stabilitygate.judge.pool import Counted, Pool, Runs, pool_of
from stabilitygate.judge.wording import same_value


def rows(*pairs: tuple[str, int]) -> list[Counted]:
    return [Counted(value, count) for value, count in pairs]


def same_word(a: str, b: str) -> bool:
    return a.split()[0] == b.split()[0]


def test_answers_are_aligned_and_ordered_by_key() -> None:
    pool = pool_of(Runs(rows(("B", 6), ("A", 4)), rows(("A", 7), ("C", 3)), 10, 10), same_value)
    assert pool == Pool(baseline=(4, 6, 0), current=(7, 0, 3))  # A, B, C by key
    assert pool.pooled == (11, 6, 3, 0, 0) and pool.observed == (4, 6, 0, 0, 0)


def test_answers_given_once_are_singles_and_unkept_baseline_samples_too() -> None:
    pool = pool_of(Runs(rows(("A", 6), ("B", 1)), rows(("A", 5), ("C", 1), ("D", 1)), 10, 7), same_value)
    assert pool.baseline == (6,) and pool.current == (5,)
    assert pool.singles == (1 + 3, 2)  # B once; three of the baseline's samples beyond its kept rows


def test_meanings_group_by_the_first_member_and_failures_stay_apart() -> None:
    before, now = rows(("Paris is it", 5), ("Paris for sure", 3)), rows(("Lyon then", 4), ("Paris again", 4))
    pool = pool_of(Runs(before, now, 10, 10, failures=(2, 2)), same_word)
    assert pool.baseline == (0, 8) and pool.current == (4, 4)  # 'Lyon then' < 'Paris is it' by key
    assert pool.failures == (2, 2) and pool.n_baseline == 10 and pool.n_current == 10


def test_a_recorded_largest_cluster_beyond_the_kept_rows_tops_up_the_modal_meaning() -> None:
    pool = pool_of(Runs(rows(("Paris", 5)), rows(("Paris", 8)), 20, 8, top_before=9), same_word)
    assert pool.baseline == (9,) and pool.singles == (11, 0)
