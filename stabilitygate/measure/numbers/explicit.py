"""An explicit answer: "#### 19", "the answer is 19", "Answer: 19", "final answer = 19", "\\boxed{19}".

Markup ("Answer: **$19**") and one hedge word ("approximately") may stand between the phrase and
the number; what the phrase introduces is read as a whole: an equation chain gives its result
("The answer is 4 + 6 = 10."), an expression its value, a number in words its value ("The
answer is seven.").
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction

from stabilitygate.measure.numbers.chains import Chain, Numbers, hedge, result
from stabilitygate.measure.numbers.links import ALTERNATIVE_GAP
from stabilitygate.measure.numbers.words import read_number_words

# Possessive quantifiers: whitespace and markup are never given back, so a long run of spaces
# after "answer is" costs linear time, not quadratic.
_ANSWER_LEAD = (
    r"(?:####|\\boxed\{"
    r"|\banswer\b\s*+(?:(?:is|was|would\s+be|will\s+be|should\s+be|must\s+be)\b\s*+:?|[:=]))"
)
_HEDGE = r"(?:(?:approximately|about|around|roughly|exactly|simply|just)\s++)?"
_MARKUP = r"(?:(?:[*_\"'`(\[{$]|\\boxed\{|\\\(|\\text\{)\s*+)*+"
_LEAD_RE = re.compile(_ANSWER_LEAD + r"\s*+" + _HEDGE + _MARKUP, re.I)
_BEFORE_DIGITS = frozenset("$\u20ac\u00a3\u00a5-+\u2212 ")  # what a number may start with before its digits


@dataclass(frozen=True)
class Explicit:
    """The answer a phrase introduces, or why it is none (a hedge: "The answer is 8 or 9")."""

    value: Fraction | None
    hedge: str | None = None


def explicit_answer(numbers: Numbers) -> Explicit | None:
    """The last explicit answer in the text; None when no answer phrase introduces a number."""
    starts = [token.start for token in numbers.tokens]
    last: int | None = None  # where the number of the last phrase that introduces one begins
    for lead in _LEAD_RE.finditer(numbers.text):
        pos = lead.end()
        if _token_at(numbers, starts, pos) is not None or read_number_words(numbers.text, pos) is not None:
            last = pos
    return None if last is None else _read_at(numbers, starts, last)


def _read_at(numbers: Numbers, starts: list[int], pos: int) -> Explicit | None:
    i = _token_at(numbers, starts, pos)
    if i is not None:
        chain = next((c for c in numbers.chains if c.first == i), Chain(i, i))
        hedged = hedge(numbers, chain)
        return Explicit(None, hedged) if hedged else Explicit(result(numbers, chain))
    words = read_number_words(numbers.text, pos)
    if words is None:
        return None
    value, end = words
    alternative = ALTERNATIVE_GAP.match(numbers.text, end)
    if alternative is not None:
        other = read_number_words(numbers.text, alternative.end())
        if other is not None and other[0] != value:
            return Explicit(None, f"{numbers.text[pos:end]} or {numbers.text[alternative.end() : other[1]]}")
    return Explicit(Fraction(value))


def _token_at(numbers: Numbers, starts: list[int], pos: int) -> int | None:
    """The number that starts at `pos`, or just before it with a sign or currency the markup took."""
    i = bisect_right(starts, pos) - 1
    if i < 0:
        return None
    token = numbers.tokens[i]
    inside = token.start <= pos < token.end
    return i if inside and all(c in _BEFORE_DIGITS for c in numbers.text[token.start : pos]) else None
