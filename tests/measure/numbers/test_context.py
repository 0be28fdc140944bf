"""Asides, closing years and concluding sentences."""

from __future__ import annotations

import pytest

from stabilitygate.measure.numbers.context import asides, conclusion_starts, is_circumstance, is_year, labels
from stabilitygate.measure.numbers.tokens import number_tokens


def aside_flags(text: str) -> list[bool]:
    return asides(text, number_tokens(text))


def test_numbers_in_balanced_brackets_are_asides() -> None:
    assert aside_flags("85 (of 90 possible)") == [False, True]
    assert aside_flags("48 [6 × (8)] then 7") == [False, True, True, False]
    assert aside_flags("(-12)") == [True]


def test_latex_delimiters_and_stray_brackets_are_no_asides() -> None:
    assert aside_flags("\\( 3 \\) and \\[ 4 \\]") == [False, False]
    assert aside_flags("1) first 5, 2) then 7") == [False, False, False, False]
    assert aside_flags("(unclosed 5 and 7") == [False, False]


@pytest.mark.parametrize(
    ("text", "year"),
    [
        ("She will be 41 in 2031.", True),
        ("In 2023, 19 came", True),
        ("since 1999", True),
        ("in the year 2031!", True),
        ("He is 41 in 2031\nNext", True),
        ("in 1500 seconds", False),  # does not close its clause: a quantity
        ("paid 2031.", False),  # no preposition
        ("in 3031.", False),
        ("in 203.", False),
        ("He is 150 years old as of 2024.", True),  # issue 38: a year after an age
        ("Lena will be 45 by 2031.", True),
        ("The town grew by 2000.", False),  # a change, not a year
        ("Nadia is 34, born 1991.", True),
        ("She was born in 1990 in Ohio", True),  # after "born", wherever the clause goes on
        ("born in March 2018.", True),
        ("At 41; the year was 1999.", True),
        ("That makes him 86, built circa 1939.", True),
    ],
)
def test_a_year_is_four_digits_after_a_preposition_closing_its_clause(text: str, year: bool) -> None:
    last = number_tokens(text)[-1] if "19 came" not in text else number_tokens(text)[0]
    assert is_year(text, last) is year


def test_concluding_sentences_begin_after_a_sentence_end() -> None:
    text = "9 + 4 = 13. So 13 it is.\n**Therefore** 13. Also 4. In total, 13"
    starts = conclusion_starts(text)
    assert [text[s : s + 4] for s in starts] == [" 13 ", "** 1", ", 13"]
    assert conclusion_starts("So 5") == [2]


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("Step 3: 5 apples", [True, False]),
        ("Question 2: the answer is 64", [True, False]),
        ("for part (2) it is 21", [True, False]),
        ("the 12th term is 45", [True, False]),  # an ordinal that names what follows
        ("She came 3rd.", [False]),  # an ordinal that is the answer
        ("the 3rd. Then 4", [True, False]),  # an ordinal that does not rank names a day, a floor, a term
        ("on the 18th", [True]),
        ("She took 3 steps and 4 questions", [False, False]),
        ("explain steps 2 and 3", [True, True]),  # issue 38: plural labels and the list after them
        ("ask about lines 3 to 5", [True, True]),
        ("rounded to 2 decimal places", [True]),  # a precision
        ("to 1 d.p.", [True]),
        ("to the nearest 10", [True]),
        ("3 significant figures", [True]),
        ("on March 3, 2024", [True, False]),  # a day of the month
        ("on 4 July", [True]),
    ],
)
def test_labels_name_rather_than_count(text: str, flags: list[bool]) -> None:
    assert labels(text, number_tokens(text)) == flags


@pytest.mark.parametrize(
    ("text", "circumstance"),
    [
        ("The count reaches 243 after 5 hours.", True),
        ("They will meet after 2.5 hours.", False),  # alone in its sentence: the answer
        ("He needs 7 more points to reach 50.", True),
        ("Lily has 14 shells after giving 6 to her sister.", True),
        ("It costs 5 in 3 shops.", False),
    ],
)
def test_a_circumstance_says_when_or_what_for(text: str, circumstance: bool) -> None:
    tokens = number_tokens(text)
    assert is_circumstance(text, tokens[-1], tokens[-2] if len(tokens) > 1 else None) is circumstance
