"""The choice parser, through parse_answer: the label a completion commits to, or why there is none."""

from __future__ import annotations

from typing import Any

import pytest

from stabilitygate.measure.parsers import ParsedAnswer, parse_answer
from stabilitygate.suite.model import AnswerSpec


def spec(**kwargs: Any) -> AnswerSpec:
    return AnswerSpec.model_validate(kwargs)


def value(answer_spec: AnswerSpec, text: str) -> Any:
    parsed = parse_answer(answer_spec, text)
    assert parsed.ok, parsed.error
    return parsed.value


ABCD = spec(choice=["A", "B", "C", "D"])


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("A", "A"),
        ("(a)", "A"),
        ("a)", "A"),
        ("Option A", "A"),
        ("The answer is A.", "A"),
        ("Answer: **A**", "A"),
        ("(A) is wrong; the answer is (B)", "B"),
        ("Both (A) and (C) look plausible.\nThe correct answer is option D.", "D"),
        ("Answer: a", "A"),
        ("the answer is a.", "A"),
        ("Final answer: \\boxed{C}", "C"),
        ("Answer: B\nOn reflection, the final answer is C", "C"),
        ("This is a hard one.\nB", "B"),
        ("Let me compare A and B.\nB is better.", "B"),
        ("A or B?\nC", "C"),
        ("C\nA and B are both wrong", "C"),
        ("Answer: A, because the others are wrong", "A"),
        ("I choose d", "D"),
    ],
)
def test_choice_finds_the_label_the_text_commits_to(text: str, label: str) -> None:
    assert value(ABCD, text) == label


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("I need a moment to think about a hard question.", "no label found"),
        ("Nothing to see here", "no label found"),
        ("The answer is A or B", "the answer names more than one label (A, B)"),
        ("Answer: C/D", "the answer names more than one label (C, D)"),
        ("A and B\nC or D", "a tie: every line that names a label names more than one"),
    ],
)
def test_choice_without_a_single_label_is_a_failure(text: str, error: str) -> None:
    assert parse_answer(ABCD, text) == ParsedAnswer(ok=False, error=error)


def test_lowercase_a_is_the_article_unless_marked_as_a_label() -> None:
    assert value(ABCD, "B is a trap.") == "B"  # the "a" is not a second label
    assert value(ABCD, "(a) is what I pick") == "A"
    assert value(ABCD, "The answer is a good guess: C") == "C"


def test_choice_labels_longer_than_a_letter_match_whole_words_case_insensitively() -> None:
    yes_no = spec(choice=["yes", "no"])
    assert value(yes_no, "YES") == "yes"
    assert value(yes_no, "Yes, I am sure the answer is No.") == "no"
    assert value(yes_no, "Well.\nno") == "no"
    assert parse_answer(yes_no, "yesterday, nobody came").error == "no label found"
    cities = spec(choice=["New York", "York"])
    assert value(cities, "The answer is New York") == "New York"
    assert value(cities, "It is York.") == "York"


def test_choice_value_is_the_label_as_written_in_the_suite() -> None:
    assert value(spec(choice=["True", "False"]), "the answer is false") == "False"
