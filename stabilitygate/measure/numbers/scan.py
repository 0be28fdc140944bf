"""A text's numbers, read once: digits and words, notations merged, marks set, neighbours linked."""

from __future__ import annotations

from stabilitygate.measure.numbers.chains import Numbers
from stabilitygate.measure.numbers.links import links_of
from stabilitygate.measure.numbers.marks import with_marks
from stabilitygate.measure.numbers.notation import with_notations
from stabilitygate.measure.numbers.tokens import NumberToken, number_tokens
from stabilitygate.measure.numbers.words import word_tokens


def scan(text: str, *, decimal_comma: bool = False) -> Numbers:
    tokens = _in_order(number_tokens(text, decimal_comma=decimal_comma), word_tokens(text))
    tokens = with_marks(text, with_notations(text, tokens))
    return Numbers(text, tokens, links_of(text, tokens))


def _in_order(digits: list[NumberToken], words: list[NumberToken]) -> list[NumberToken]:
    """Both kinds in text order (a number in words never overlaps one in digits)."""
    if not words:
        return digits
    return sorted(digits + words, key=lambda token: token.start)
