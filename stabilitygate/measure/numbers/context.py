"""Where a number stands: in an aside, as a year, at the head of a concluding sentence.

These decide which numbers can be the last number of a text (docs/design.md §4.1): an aside
("85 (of 90 possible)") or a year that closes a clause ("41 in 2031.") only frames the answer.
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
