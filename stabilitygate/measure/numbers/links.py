"""What joins two neighbouring numbers: an operator, `=`, `≈`, an "or", or nothing.

Only the text between the two is looked at, with markup (`**`, `$`, backticks, GSM8K's `<<` and
`>>`) and spaces set aside: "4 + 6 = 10", "$6 \\times 8 = 48$", "2/3 ≈ 0.67", "8 or 9".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from itertools import pairwise

from stabilitygate.measure.numbers.marks import is_precision
from stabilitygate.measure.numbers.tokens import NumberToken

_MAX_GAP = 40  # characters; a longer gap joins nothing, which keeps the look linear in the text


class LinkKind(Enum):
    NONE = "none"
    OPERATOR = "operator"  # + - × ÷ and their spellings
    DASH = "dash"  # an unspaced hyphen: a range ("12-7") or a subtraction, so never evaluated
    EQUALS = "equals"
    APPROX = "approx"  # what follows is a rounding of what comes before
    ALTERNATIVE = "alternative"  # "or": two answers offered ("8 or 9", "x = 2 or x = -3")
    ANOTHER = "another"  # a second value of the answer ("x = 1 and x = 5", "x = 2, y = 3")
    RESTATED = "restated"  # "which is", "that is": the same answer again, or a remark on it


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
_UNIT = r"\s*(?P<unit>[^\W\d_]+\.?)?(?:\s+[^\W\d_]+\.?)?"  # up to two words: "m tall", "minutes"
_APPROX_WORDS = re.compile(
    _UNIT + r"\s*,?\s*(?:or|i\.e\.|that\s+is|which\s+is)\s*,?\s*"
    r"(?:about|approximately|approx\.?|roughly|around|nearly)\s+",
    re.I,
)
_UNKNOWN = r"[a-zA-Z](?:_\{?\w+\}?)?"  # x, x_1, x_{2}
#: "8 or 9", "6, or maybe 7", "30, maybe 35", "12 apples, or 13", "x = 2 or x = -3".
ALTERNATIVE_GAP = re.compile(
    _UNIT + r"\s*,?\s*(?<![^\W\d_])(?=or\b|maybe\b|perhaps\b|possibly\b)(?:or\s+)?"
    r"(?P<hedge>(?:maybe|perhaps|possibly|even)\s+)?"
    rf"(?:{_UNKNOWN}\s*=\s*)?[*_`$]*",
    re.I,
)
#: "95 minutes, which is 1 hour and 35 minutes", "0.5, that is 50%".
_RESTATED_GAP = re.compile(
    _UNIT + r"\s*,?\s*(?:which\s+is|that\s+is|that['’]s|i\.e\.,?|in\s+other\s+words,?)\s+[*_`$]*", re.I
)
#: "4.42 rounds up to 5", "4.42, rounded up to 5": the chain goes on to the rounded value.
_ROUNDED_GAP = re.compile(
    r"\s*,?\s*(?:which\s+|and\s+)?(?:rounds?|rounded|rounding)\s+(?:(?:up|down|off)\s+)?(?:to\s+)?[*_`$]*", re.I
)
_ANOTHER_GAP = re.compile(rf"[\s$]*(?:,|;|\band\b|,\s*and\b)[\s$]*{_UNKNOWN}[\s$]*=[\s$]*")
_MAX_WORDED_SPACES = 6  # " kilometres tall, or approximately " has 5
_REMARK_IN_BRACKETS = re.compile(r"\s*\([^()0-9\n]*\)")
_TIMES_X = re.compile(r"\s+[x×]\s+")  # "6 x 8": a letter x only with spaces on both sides


def link_between(text: str, left: NumberToken, right: NumberToken) -> Link:
    """The link the text writes between two neighbouring numbers."""
    gap = text[left.end : right.start]
    if len(gap) > _MAX_GAP:
        return NO_LINK
    if "(" in gap:  # "4 (counting Sunday) or 3": a remark in brackets links nothing
        gap = _REMARK_IN_BRACKETS.sub(" ", gap)
    core = _MARKUP.sub("", gap)
    if core == "=":
        return Link(LinkKind.EQUALS)
    if core in _APPROX:
        return Link(LinkKind.APPROX)
    if core in ("-", "\u2212") and gap == core:
        return Link(LinkKind.DASH)
    if core in _OPERATORS:
        return Link(LinkKind.OPERATOR, _OPERATORS[core])
    if _TIMES_X.fullmatch(gap):
        return Link(LinkKind.OPERATOR, "*")
    if _ROUNDED_GAP.fullmatch(gap):  # "4.42 rounds up to 5"; "12.6, rounded to 1 decimal place" is no link
        return NO_LINK if is_precision(text, right) else Link(LinkKind.EQUALS)
    return _worded(gap)


def _worded(gap: str) -> Link:
    """The links words write: "or about", "or", "maybe", "and x =", "which is"."""
    if gap.count(" ") > _MAX_WORDED_SPACES:  # a sentence between them, not a few linking words
        return NO_LINK
    if _APPROX_WORDS.fullmatch(gap):
        return Link(LinkKind.APPROX)
    if ALTERNATIVE_GAP.fullmatch(gap):
        return Link(LinkKind.ALTERNATIVE)
    if _ANOTHER_GAP.fullmatch(gap):
        return Link(LinkKind.ANOTHER)
    if _RESTATED_GAP.fullmatch(gap):
        return Link(LinkKind.RESTATED)
    return NO_LINK


def links_of(text: str, tokens: list[NumberToken]) -> list[Link]:
    """links[i] joins tokens[i - 1] and tokens[i]; links[0] is NO_LINK."""
    return [NO_LINK] + [link_between(text, a, b) for a, b in pairwise(tokens)]
