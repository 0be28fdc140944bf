"""Explicit answers: the phrase, what it introduces (a chain, an expression, words), and hedges."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.numbers.chains import Numbers
from stabilitygate.measure.numbers.explicit import Explicit, explicit_answer
from stabilitygate.measure.numbers.links import links_of
from stabilitygate.measure.numbers.tokens import number_tokens


def explicit(text: str) -> Explicit | None:
    tokens = number_tokens(text)
    return explicit_answer(Numbers(text, tokens, links_of(text, tokens)))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The answer is 19.", 19),
        ("#### 72", 72),
        ("Answer: **$19**", 19),
        ("The answer is 3 + 5 = 8, since 3 and 5 make 8", 8),
        ("Final answer = 7 × 6 = 42", 42),
        ("The answer is 7 × 6", 42),
        ("The answer is 5/8.", Fraction(5, 8)),
        ("\\boxed{\\dfrac{5}{8}}", Fraction(5, 8)),
        ("\\boxed{5/8}", Fraction(5, 8)),
        ("Answer: \\( 2\\frac{1}{2} \\)", Fraction(5, 2)),
        ("The answer is 1/3 ≈ 0.33", Fraction(1, 3)),
        ("The answer is eleven.", 11),
        ("The answer is: forty-two cents", 42),
        ("The answer is 3. No wait, the answer is 4.", 4),
        ("The answer is 5 / 0. No, the answer is 5.", 5),  # only the last phrase is worked out
    ],
)
def test_the_last_phrase_gives_what_it_introduces(text: str, value: Fraction) -> None:
    assert explicit(text) == Explicit(Fraction(value))


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("The answer is 6 or 7.", "6 or 7"),
        ("The answer is six or seven.", "six or seven"),
        ("The answer is 12, or perhaps 13.", "12 or 13"),
    ],
)
def test_an_answer_offered_with_or_is_a_hedge(text: str, hedged: str) -> None:
    assert explicit(text) == Explicit(None, hedged)


@pytest.mark.parametrize("text", ["The answers: 1, 2", "the answer is clear: 5", "no phrase, 5", "Answer: a lot"])
def test_no_phrase_introducing_a_number_is_no_explicit_answer(text: str) -> None:
    assert explicit(text) is None
