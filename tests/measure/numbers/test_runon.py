"""Where the answer ends: end-of-text tokens, GSM8K's marker line, a new question after an answer."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.explicit import ANSWER_LEAD
from stabilitygate.measure.numbers.runon import answer_part


def cut(text: str) -> str:
    return answer_part(text, ANSWER_LEAD)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("4 * 6 = 24.\n#### 24\n\nQuestion: Tom has 7 marbles. #### 12", "4 * 6 = 24.\n#### 24"),
        ("#### 35\nQ: 9 birds...", "#### 35"),
        ("Total 225 miles<|endoftext|>Question: 3 cups? #### 9", "Total 225 miles"),
        ("It is 7.</s>Next 8", "It is 7."),
        ("So the answer is 15.\n\nQ: If a pen costs $3...\nA: So the answer is 18.", "So the answer is 15."),
        ("The answer is 24.\n\nProblem 2: Kim has 40 stickers.", "The answer is 24."),
    ],
)
def test_the_answer_ends_where_the_next_question_begins(text: str, kept: str) -> None:
    assert cut(text).rstrip() == kept


@pytest.mark.parametrize(
    "text",
    [
        "Question: how many are left?\nThere are 12 - 5 = 7 left.",  # the question echoed first: nothing before it
        "Given 12 apples.\nQuestion: how many are left?\nThe answer is 7.",  # no answer before the question
        "#### \n12 apples",  # a marker without a number ends nothing
    ],
)
def test_nothing_is_cut_before_an_answer(text: str) -> None:
    assert cut(text) == text
