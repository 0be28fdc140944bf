"""What joins two neighbouring numbers: an operator, `=`, `≈`, an "or", or nothing.

Only the text between the two is looked at, with markup (`**`, `$`, backticks, GSM8K's `<<` and
`>>`) and spaces set aside: "4 + 6 = 10", "$6 \\times 8 = 48$", "2/3 ≈ 0.67", "8 or 9".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from itertools import pairwise

from stabilitygate.measure.numbers.tokens import NumberToken

_MAX_GAP = 40  # characters; a longer gap joins nothing, which keeps the look linear in the text


class LinkKind(Enum):
    NONE = "none"
    OPERATOR = "operator"  # + - × ÷ and their spellings
    DASH = "dash"  # an unspaced hyphen: a range ("12-7") or a subtraction, so never evaluated
    EQUALS = "equals"
    APPROX = "approx"  # what follows is a rounding of what comes before
    ALTERNATIVE = "alternative"  # "or": two answers offered


@dataclass(frozen=True)
class Link:
    kind: LinkKind
    operator: str = ""  # for OPERATOR: one of + - * /


NO_LINK = Link(LinkKind.NONE)
_MARKUP = re.compile(r"\*\*|__|<<|>>|[\s`$]|\\[()\[\]]")
_OPERATORS = {
    "+": "+",
    "-": "-",
    "\u2212": "-",
    "*": "*",
    "×": "*",
    "·": "*",
    "\\times": "*",
    "\\cdot": "*",
    "/": "/",
    "÷": "/",
    "\\div": "/",
}
_APPROX = frozenset({"≈", "\\approx", "≅", "~", "=~", "~=", "\\sim", "≃"})
_APPROX_WORDS = re.compile(
    r"\s*,?\s*(?:or|i\.e\.|that\s+is|which\s+is)\s*,?\s*(?:about|approximately|approx\.?|roughly|around|nearly)\s+",
    re.I,
)
ALTERNATIVE_GAP = re.compile(r"\s*,?\s*or\s+(?:(?:maybe|perhaps|possibly|even)\s+)?[*_`$]*", re.I)
_TIMES_X = re.compile(r"\s+[x×]\s+")  # "6 x 8": a letter x only with spaces on both sides


def link_between(text: str, left: NumberToken, right: NumberToken) -> Link:
    """The link the text writes between two neighbouring numbers."""
    gap = text[left.end : right.start]
    if len(gap) > _MAX_GAP:
        return NO_LINK
    core = _MARKUP.sub("", gap)
    if core == "=":
        return Link(LinkKind.EQUALS)
    if core in _APPROX or _APPROX_WORDS.fullmatch(gap):
        return Link(LinkKind.APPROX)
    if core in ("-", "\u2212") and gap == core:
        return Link(LinkKind.DASH)
    if core in _OPERATORS:
        return Link(LinkKind.OPERATOR, _OPERATORS[core])
    if _TIMES_X.fullmatch(gap):
        return Link(LinkKind.OPERATOR, "*")
    if ALTERNATIVE_GAP.fullmatch(gap):
        return Link(LinkKind.ALTERNATIVE)
    return NO_LINK


def links_of(text: str, tokens: list[NumberToken]) -> list[Link]:
    """links[i] joins tokens[i - 1] and tokens[i]; links[0] is NO_LINK."""
    return [NO_LINK] + [link_between(text, a, b) for a, b in pairwise(tokens)]


def same_answer(a: NumberToken, b: NumberToken) -> bool:
    """Two numbers offered as one answer: equal, or one a rounding of the other ("3.14, or 22/7")."""
    if a.value is None or b.value is None:
        return False
    return a.value == b.value or _rounds_to(b.value, a) or _rounds_to(a.value, b)


def _rounds_to(exact: Fraction, shown: NumberToken) -> bool:
    """`shown` is `exact` rounded (half up) or cut to the decimals it writes (at least one)."""
    if not shown.decimals or shown.value is None:
        return False
    scale = 10**shown.decimals
    magnitude = abs(exact) * scale
    sign = -1 if exact < 0 else 1
    candidates = {int(magnitude + Fraction(1, 2)), int(magnitude)}
    return any(Fraction(sign * c, scale) == shown.value for c in candidates)
