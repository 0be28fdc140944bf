"""Answers of two runs aligned into the guard's categories."""

from __future__ import annotations

from stabilitygate.judge.alignment import Counted, guard_p


def rows(*pairs: tuple[str, int]) -> list[Counted]:
    return [Counted(text, count) for text, count in pairs]


def same_word(a: str, b: str) -> bool:
    return a.split()[0] == b.split()[0]


def test_one_pooled_answer_has_nothing_to_test() -> None:
    assert guard_p(rows(("Paris is it", 10)), rows(("Paris again", 10)), same_word, (10, 10)) is None


def test_a_flip_of_meaning_is_significant_and_a_split_is_not() -> None:
    flip = guard_p(rows(("Paris", 10)), rows(("Lyon", 10)), same_word, (10, 10))
    split = guard_p(rows(("Paris", 6), ("Lyon", 4)), rows(("Lyon", 6), ("Paris", 4)), same_word, (10, 10))
    assert flip is not None and flip < 0.001
    assert split is not None and split > 0.3


def test_samples_without_a_known_answer_are_answers_of_their_own() -> None:
    # The baseline kept 6 of its 10 samples' answers: 4 unknown ones never join 'Paris'.
    p = guard_p(rows(("Paris", 6)), rows(("Paris", 10)), same_word, (10, 10))
    assert p == 1.0
