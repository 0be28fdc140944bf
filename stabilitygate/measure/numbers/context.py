"""Where a number stands: in an aside, as a year, as a label, at the head of a concluding sentence.

These decide which numbers can be the last number of a text (docs/design.md §4.1): an aside
("85 (of 90 possible)"), a year that closes a clause ("41 in 2031.") or a label ("Step 3",
"question 3", "the 12th term is 45") only frames the answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from stabilitygate.measure.numbers.tokens import NumberToken

_BRACKET = re.compile(r"(?<!\\)[()\[\]]")  # \( \) \[ \] delimit LaTeX, not asides
_CLOSES = {")": "(", "]": "["}
_YEAR_BEFORE = re.compile(r"(?:\b(?:in|since|until|till|before|after|during)|\byear)\s+$", re.I)
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;:!?)\]\n]|$)")
_CONCLUSION = re.compile(
    r"(?:^|[.!?:]\s|\n)[\s*_#>-]*+(?:so|therefore|thus|hence|altogether|overall|finally|in\s+total|in\s+all)\b",
    re.I,
)
_LOOKBACK = 24
_LABEL_NAMES = (
    "step question problem part exercise task case method approach example equation eq figure fig table section"
    " chapter scenario stage phase"
)
_LABEL_WORDS = frozenset(_LABEL_NAMES.split())
_LABEL_HINT = re.compile(rf"\b(?:{'|'.join(sorted(_LABEL_WORDS, key=len, reverse=True))})\b")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\.?[ \t]*(?:#|[Nn]o\.)?[ \t]*\(?\Z")
_ORDINAL_AFTER = re.compile(r"(?:st|nd|rd|th)\b")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def asides(text: str, tokens: list[NumberToken]) -> list[bool]:
    """For each number, whether it stands inside balanced (...) or [...]."""
    spans = _aside_spans(text)
    opens = [opened for opened, _ in spans]
    flags = []
    for token in tokens:
        i = bisect_right(opens, token.start) - 1
        flags.append(i >= 0 and token.start < spans[i][1])
    return flags


def _aside_spans(text: str) -> list[tuple[int, int]]:
    """The outermost balanced (...) and [...] spans as (open, close) offsets, in order."""
    if "(" not in text and "[" not in text:
        return []
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for m in _BRACKET.finditer(text):
        char = m.group()
        if char in "([":
            stack.append((char, m.start()))
        elif stack and stack[-1][0] == _CLOSES[char]:  # a stray closer is ignored
            _, opened = stack.pop()
            if not stack:
                spans.append((opened, m.start()))
    return spans


def is_year(text: str, token: NumberToken) -> bool:
    """A four-digit year after "in", "since", "until", ... that ends its clause ("41 in 2031.")."""
    if not (token.plain_integer and len(token.text) == 4 and token.text[0] in "12"):
        return False
    before = text[max(0, token.start - _LOOKBACK) : token.start]
    return _YEAR_BEFORE.search(before) is not None and _CLAUSE_END.match(text, token.end) is not None


def conclusion_starts(text: str) -> list[int]:
    """Offsets where a concluding sentence begins ("So ...", "Therefore ...", "In total ...")."""
    return [m.end() for m in _CONCLUSION.finditer(text)]


def labels(text: str, tokens: list[NumberToken]) -> list[bool]:
    """For each number, whether it labels rather than counts: "Step 3", "Question 2", or an ordinal
    ("12th") followed by another number in its sentence ("the 12th term is 45")."""
    lower = text.lower()
    named = _LABEL_HINT.search(lower) is not None
    flags = []
    for i, token in enumerate(tokens):
        following = tokens[i + 1].start if i + 1 < len(tokens) else None
        flags.append(
            token.plain_integer and ((named and _labelled(text, token)) or _ordinal_before(text, token, following))
        )
    return flags


def _labelled(text: str, token: NumberToken) -> bool:
    word = _WORD_BEFORE.search(text, max(0, token.start - 16), token.start)
    return word is not None and word.group(1).lower() in _LABEL_WORDS


def _ordinal_before(text: str, token: NumberToken, following: int | None) -> bool:
    """ "the 12th term is 45": an ordinal with another number after it in its sentence."""
    if following is None or _ORDINAL_AFTER.match(text, token.end) is None:
        return False
    return _SENTENCE_END.search(text, token.end, following) is None
