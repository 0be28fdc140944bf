"""A text's numbers, read once: digits and words, notations merged, marks set, neighbours linked."""

from __future__ import annotations

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Numbers
from stabilitygate.measure.numbers.links import links_of
from stabilitygate.measure.numbers.marks import with_marks
from stabilitygate.measure.numbers.notation import with_notations
from stabilitygate.measure.numbers.tokens import NumberToken, number_tokens
from stabilitygate.measure.numbers.words import word_tokens

#: More numbers than this in one text are no answer to read: a careful reader would not pick one
#: out, and refusing them bounds the reader's work whatever the shape of the text (issue 37).
MAX_NUMBERS = 10_000


def scan(text: str, *, decimal_comma: bool = False) -> Numbers:
    digits = number_tokens(text, decimal_comma=decimal_comma, limit=MAX_NUMBERS + 1)
    words = word_tokens(text, limit=MAX_NUMBERS + 1 - len(digits))
    if len(digits) + len(words) > MAX_NUMBERS:
        raise NoAnswer(f"too many numbers to take one as the answer (more than {MAX_NUMBERS:,})")
    tokens = _in_order(digits, words)
    tokens = with_marks(text, with_notations(text, tokens))
    return Numbers(text, tokens, links_of(text, tokens))


def _in_order(digits: list[NumberToken], words: list[NumberToken]) -> list[NumberToken]:
    """Both kinds in text order (a number in words never overlaps one in digits)."""
    if not words:
        return digits
    return sorted(digits + words, key=lambda token: token.start)
