"""Explicit answers: the phrase, what it introduces (a chain, an expression, words), hedges and refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stabilitygate.measure.numbers.explicit import Explicit, explicit_answer
from stabilitygate.measure.numbers.scan import scan


def explicit(text: str) -> Explicit | None:
    return explicit_answer(scan(text))


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
    found = explicit(text)
    assert found is not None and found.value == value and found.reason is None


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("The answer is 6 or 7.", "6 or 7"),
        ("The answer is six or seven.", "six or seven"),
        ("The answer is 12, or perhaps 13.", "12 or 13"),
    ],
)
def test_an_answer_offered_with_or_is_a_hedge(text: str, hedged: str) -> None:
    found = explicit(text)
    assert found is not None and found.value is None and found.reason == f"no committed answer: {hedged}"


@pytest.mark.parametrize("text", ["The answers: 1, 2", "the answer is clear: 5", "no phrase, 5", "Answer: a lot"])
def test_no_phrase_introducing_a_number_is_no_explicit_answer(text: str) -> None:
    assert explicit(text) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The answer to question 3 is 17.", 17),  # a label between "answer" and its verb
        ("So the answer for part 2 is 21.", 21),
        ("Answer (Q4): 12", 12),
        ("The answer is x = 5.", 5),
        ("\\boxed{x = 5}", 5),
        ("\\boxed{12 \\text{ apples}}", 12),
        ("\\boxed{45^\\circ}", 45),
        ("\\boxed{\\$45.50}", Fraction(91, 2)),
        ("\\boxed{10,\\!080}", 10080),
        ("\\boxed{2^{10}}", 1024),
    ],
)
def test_labels_and_decorations_around_the_answer_are_set_aside(text: str, value: int) -> None:
    found = explicit(text)
    assert found is not None and found.value == value


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("The diagonal is \\boxed{4\\sqrt{2}}.", "not one number: \\boxed{4\\sqrt{2}}"),
        ("\\boxed{3x^2+2x}", "not one number: \\boxed{3x^2+2x}"),
        ("\\boxed{2\\pi}", "not one number: \\boxed{2\\pi}"),
        ("\\boxed{5 \\text{ and } 7}", "not one number: \\boxed{5 \\text{ and } 7}"),
        ("\\boxed{(2, -1)}", "(2, -1) is a tuple, not one number"),
        ("The answer is x + 3.", "not one number: x + 3."),
        ("The answer is $\\frac{\\sqrt{3}}{2}$.", "not one number: \\frac{\\sqrt{3}}{2}$."),
        ("The answer is 7 to 9 days.", "7 to 9 is a range, not one number"),
    ],
)
def test_what_is_not_one_number_is_refused_with_its_reason(text: str, reason: str) -> None:
    found = explicit(text)
    assert found is not None and (found.value, found.reason) == (None, reason)


def test_a_supposed_answer_is_marked_hypothetical() -> None:
    supposed, given = explicit("If so, the answer would be 36."), explicit("The answer is 36.")
    assert supposed is not None and supposed.hypothetical and supposed.value == 36
    assert given is not None and not given.hypothetical
