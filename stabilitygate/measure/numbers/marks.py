"""Numbers that are no single number where they stand: roots, multiples of π, algebra, ±, ranges, compounds.

A token is kept but marked (`not_one`) so that it is refused when it is the answer and passed
over in arithmetic it is not part of: `4\\sqrt{2}`, `2√3`, `2\\pi`, `3x^2`, `5a + 3b`, `x + 3`,
`-1 ± √5`; ranges (`between 4 and 5`, `12–15`, `from 20 to 25`, `7 to 9 days`, but not `rose from
20 to 35`); compound quantities (`3 hours and 20 minutes`, `6 feet 2 inches`, `2 h 15 min`).
"""

from __future__ import annotations

import re

from stabilitygate.measure.numbers.tokens import NumberToken, refused

_LOOKBACK = 12  # enough for `\\sqrt[3]{`, `x + `, `\\pm `
_RANGE_LOOKBACK = 40
# What marks a number as no single number, right after it or right before it (one match each).
_AFTER = re.compile(
    r"(?P<root>\s*(?:√|\\sqrt\b))|(?P<pi>\s*(?:π|\\pi\b))|(?P<plus_minus>\s*(?:±|\\pm\b))"
    # A letter standing for a number: right after the digits ("3x", "5a"), or an operator away ("x + 3").
    r"|(?P<variable>[abnxyz](?![A-Za-z])|\s*[-+*/×·^]\s*[a-zA-Z](?![A-Za-z(]))"
)
_BEFORE = re.compile(
    r"(?:(?P<root>√|\\sqrt\s*(?:\[[0-9]+\])?\s*\{?)|(?P<plus_minus>±|\\pm)"
    r"|(?P<variable>(?<![A-Za-z\\])[a-zA-Z]\s*(?:[-+*/×·]|\^\{?)))\s*$"
)
_BEFORE_HINT = re.compile(r"[√\\±^+\-*/×·]")  # what _BEFORE needs: most numbers follow plain words
_WHAT = {
    "root": "is a root, not one number",
    "pi": "is a multiple of π, not one number",
    "plus_minus": "is two values",
    "variable": "is an expression, not one number",
}
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)
_FROM = re.compile(r"\bfrom\s+$", re.I)
_AND = re.compile(r"\s+and\s+")
_TO = re.compile(r"\s+(?:to|through)\s+")
_DASH = re.compile(r"\s*–\s*|—")  # a spaced em dash is a pause in prose ("15 — 3 more than")
#: Verbs of change: "rose from 20 to 35" is a change, and 35 its new value, not a range.
_CHANGE = re.compile(
    r"\b(?:rose|rises?|risen|increase[ds]?|grew|grows?|grown|fell|falls?|fallen|drop(?:ped|s)?|decrease[ds]?"
    r"|went|goes|gone|climb(?:ed|s)?|jump(?:ed|s)?|change[ds]?|decline[ds]?|raised?|cut|reduced?|moved?|up|down"
    r"|convert(?:ed|s)?|round(?:ed|s|ing)?|add(?:ed|s|ing)?|set|sets|multipl(?:y|ied|ies)|divided?)\b[^.;!?\n]*$",
    re.I,
)
#: A precision, not a quantity: "to 2 decimal places", "3 significant figures", "1 d.p.", "to the nearest 10".
_PRECISION_AFTER = re.compile(
    r"\s*(?:decimal\s+(?:places?|points?|digits?)|decimals?\b|d\.\s?p\.?|dp\b|significant\s+(?:figures?|digits?)"
    r"|sig\.?\s*figs?\b|s\.\s?f\.|sf\b)",
    re.I,
)
_NEAREST_BEFORE = re.compile(r"\bnearest\s+(?:whole\s+)?\Z", re.I)
_UNITS = {
    "time": "years? yrs? months? weeks? wks? days? hours? hrs? h minutes? mins? min seconds? secs? s",
    "length": "km kilometres? kilometers? metres? meters? m cm mm miles? mi yards? yds? feet foot ft inch(?:es)? in",
    "mass": "kg g grams? mg tonnes? tons? lbs? pounds? oz ounces? stones? st",
    "volume": "l L litres? liters? ml mL gallons? gal quarts? qt pints? pt cups?",
}
_FAMILY = {name: re.compile(r"\s*(?:" + "|".join(words.split()) + r")(?![A-Za-z])") for name, words in _UNITS.items()}
_UNIT_START = re.compile(r"\s*[A-Za-z]")
_MAX_GAP = 24  # characters between two numbers that make one range or compound
_COMPOUND_GAP = re.compile(r"\s*(?:,\s*|and\s+)?")


def with_marks(text: str, tokens: list[NumberToken]) -> list[NumberToken]:
    """The tokens, with ranges and compound quantities merged, and each refused where it is no number."""
    tokens = _merged_pairs(text, tokens)
    return [_marked(text, token) for token in tokens]


def _marked(text: str, token: NumberToken) -> NumberToken:
    if token.not_one:
        return token
    after = _AFTER.match(text, token.end)
    start = max(0, token.start - _LOOKBACK)
    before = _BEFORE.search(text, start, token.start) if _BEFORE_HINT.search(text, start, token.start) else None
    kind = (after.lastgroup if after else None) or (before.lastgroup if before else None)
    if kind is None:
        return token
    return refused(token, f"{_around(text, token)} {_WHAT[kind]}")


def _around(text: str, token: NumberToken) -> str:
    """The token with a few characters either side, as the reason shows it."""
    start, end = max(0, token.start - 8), min(len(text), token.end + 8)
    return " ".join(text[start:end].split())


def _merged_pairs(text: str, tokens: list[NumberToken]) -> list[NumberToken]:
    merged: list[NumberToken] = []
    i = 0
    while i < len(tokens):
        pair = (_range(text, tokens, i) or _compound(text, tokens, i)) if i + 1 < len(tokens) else None
        if pair is not None:
            merged.append(pair)
            i += 2
        else:
            merged.append(tokens[i])
            i += 1
    return merged


def is_precision(text: str, token: NumberToken) -> bool:
    """ "to 2 decimal places", "3 significant figures", "to the nearest 10": how exact, not how many."""
    if token.value is None or token.value.denominator != 1:
        return False
    before = _NEAREST_BEFORE.search(text, max(0, token.start - 24), token.start)
    return before is not None or _PRECISION_AFTER.match(text, token.end) is not None


def _range(text: str, tokens: list[NumberToken], i: int) -> NumberToken | None:
    low, high = tokens[i], tokens[i + 1]
    gap = text[low.end : high.start]
    if len(gap) > _MAX_GAP:
        return None
    before = text[max(0, low.start - _RANGE_LOOKBACK) : low.start]
    if _AND.fullmatch(gap):
        ranged = _BETWEEN.search(before) is not None
    elif _TO.fullmatch(gap):  # "rose from 20 to 35" changes; "4.47 to 2 decimal places" is exact to
        ranged = _CHANGE.search(before) is None and not is_precision(text, high)
    else:
        ranged = _DASH.fullmatch(gap) is not None
    if not ranged:
        return None
    word = _BETWEEN.search(before) or _FROM.search(before)
    start = low.start - len(before) + word.start() if word else low.start
    written = text[start : high.end]
    return refused(NumberToken(start, high.end, written, None), f"{written} is a range, not one number")


def _compound(text: str, tokens: list[NumberToken], i: int) -> NumberToken | None:
    """ "3 hours and 20 minutes": two units of one kind, neither the answer alone."""
    big, small = tokens[i], tokens[i + 1]
    if small.start - big.end > _MAX_GAP or not _UNIT_START.match(text, big.end):
        return None
    for family in _FAMILY.values():
        first = family.match(text, big.end)
        if first is None or (gap := _COMPOUND_GAP.match(text, first.end())) is None or gap.end() != small.start:
            continue
        second = family.match(text, small.end)
        if second is None or second.group().strip() == first.group().strip():
            continue
        written = text[big.start : second.end()]
        token = NumberToken(big.start, second.end(), written, None)
        return refused(token, f"{written} is a compound quantity, not one number")
    return None
