"""Texts that decline to answer."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.refusals import refusal_in


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, but I can't determine how many of the 12 were eaten.",
        "There isn't enough information to answer this.",
        "I cannot solve this problem as stated.",
        "The question is ambiguous.",
        "As an AI, I don't have access to the 2023 figures.",
        "It is impossible to determine the exact age.",
        "I'm not able to calculate that without the rate.",
        "This cannot be determined from 3, 4 and 9.",
        "The puzzle has no unique answer.",
        "This equation has no solution since 5 can't be split into 3 equal parts.",
        "I won't guess here: 3 + 4 = 7 boxes, but how many are empty?",  # issue 38: refusals that quote arithmetic
        "I can't verify that 17 × 23 = 391 is what your teacher wants.",
        "I'd need the width too; area = 12 × width.",
        "The problem never says how many were sold.",
        "I'm not sure what you're asking. 5 + 5 = 10, but that doesn't seem right.",
        "Without knowing the price, all I can say is 3 items cost 3p.",
        "Not enough info. If she had 5, 5 × 3 = 15.",
        "I can't be certain: 3 × 7 = 21 if there are 7 per row.",
        "The slope is undefined since 4 - 4 = 0.",
    ],
)
def test_declining_is_found(text: str) -> None:
    assert refusal_in(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "She cannot buy more than 3, so she buys 3.",
        "I can see that 4 + 5 = 9.",
        "I'm sorry for the confusion: the answer is 5.",
        "Each unique colour appears once; 6 in all.",
    ],
)
def test_reasoning_that_mentions_such_words_is_no_refusal(text: str) -> None:
    assert refusal_in(text) is None
