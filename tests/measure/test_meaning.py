from __future__ import annotations

from collections.abc import Callable

import pytest

from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.measure.meaning import (
    JudgmentLookup,
    MissingJudgment,
    Pair,
    cluster_by_judgments,
    cluster_steps,
    drive,
    sizes_of,
)

JUDGE = "judge-key"


def meaning_of(text: str) -> str:
    """The scripted rule: texts mean the same when they share their first word."""
    return text.split()[0]


def asked(counts: dict[str, int], entails: Callable[[Pair], bool]) -> tuple[list[list[str]], list[Pair]]:
    questions: list[Pair] = []

    def answer(pair: Pair) -> bool:
        questions.append(pair)
        return entails(pair)

    return drive(cluster_steps(counts), answer), questions


def by_first_word(pair: Pair) -> bool:
    return meaning_of(pair[0]) == meaning_of(pair[1])


def test_texts_join_the_first_cluster_whose_first_member_means_the_same() -> None:
    counts = {"b one": 1, "a one": 3, "a two": 2, "b two": 2}
    clusters, questions = asked(counts, by_first_word)
    # Order: "a one" (3), then "a two" and "b two" (2, first appearance), then "b one" (1).
    assert clusters == [["a one", "a two"], ["b two", "b one"]]
    assert sizes_of(clusters, counts) == [5, 3]
    assert questions == [
        ("a one", "a two"),
        ("a two", "a one"),  # both directions for a join
        ("a one", "b two"),  # one direction is enough to refuse
        ("a one", "b one"),
        ("b two", "b one"),
        ("b one", "b two"),
    ]


def test_one_way_entailment_is_not_one_meaning() -> None:
    # "a x" entails everything, nothing entails "a x" back: no join.
    clusters, questions = asked({"a x": 2, "a y": 1}, lambda pair: pair[0] == "a x")
    assert clusters == [["a x"], ["a y"]]
    assert questions == [("a x", "a y"), ("a y", "a x")]


def test_calls_grow_with_the_distinct_meanings() -> None:
    same = {f"a {i}": 1 for i in range(20)}
    different = {f"{i} x": 1 for i in range(20)}
    assert len(asked(same, by_first_word)[1]) == 2 * 19
    assert len(asked(different, by_first_word)[1]) == 20 * 19 // 2


def lookup_for(counts: dict[str, int], rule: Callable[[Pair], bool]) -> JudgmentLookup:
    judgments = {}
    for a in counts:
        for b in counts:
            reply = "entailment" if rule((a, b)) else "neutral"
            judgments[PairKey.of(JUDGE, a, b)] = Judgment.of_reply(reply, {"prompt_tokens": 10})
    return JudgmentLookup(JUDGE, judgments)


def test_recorded_judgments_rebuild_the_clusters_and_count_what_was_used() -> None:
    counts = {"a one": 3, "a two": 2, "b two": 2, "b one": 1}
    lookup = lookup_for(counts, by_first_word)
    assert cluster_by_judgments(counts, lookup) == [["a one", "a two"], ["b two", "b one"]]
    assert len(lookup.used) == 6


def test_a_missing_judgment_says_which_pair_and_why() -> None:
    counts = {"a one": 3, "a two": 2}
    lookup = JudgmentLookup(JUDGE, {}, {PairKey.of(JUDGE, "a one", "a two"): "http_500: scripted 500"})
    with pytest.raises(MissingJudgment, match="scripted 500") as caught:
        cluster_by_judgments(counts, lookup)
    assert caught.value.pair == ("a one", "a two")
