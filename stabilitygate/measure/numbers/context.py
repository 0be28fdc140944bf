"""Where a number stands: in an aside, as a year, as a label or precision, as a circumstance, at the
head of a concluding sentence.

These decide which numbers can be the last number of a text (docs/design.md §4.1): an aside
("85 (of 90 possible)"), a year that closes a clause ("41 in 2031.", "45 by 2031."), a label
("Step 3", "steps 2 and 3", "the 12th term", "March 3"), a precision ("to 2 decimal places") or a
circumstance ("243 after 5 hours", "7 more to reach 50") only frames the answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from stabilitygate.measure.numbers.marks import is_precision
from stabilitygate.measure.numbers.tokens import NumberToken
from stabilitygate.measure.numbers.words import ranks

_BRACKET = re.compile(r"(?<!\\)[()\[\]]")  # \( \) \[ \] delimit LaTeX, not asides
_CLOSES = {")": "(", "]": "["}
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?"
)
_YEAR_BEFORE = re.compile(
    r"(?:\b(?:in|since|until|till|before|after|during|as\s+of|by|born|circa|c\.|ca\.)"
    rf"|\byear(?:\s+(?:is|was|of))?,?|\b(?:{_MONTH})\.?(?:\s+[0-9]{{1,2}}(?:st|nd|rd|th)?,?)?)\s+$",
    re.I,
)
_BORN = re.compile(r"\b(?:born|founded|built|established|married|died)(?:\s+(?:in|on|around|circa))?\s+\Z", re.I)
#: A day of the month: "March 3, 2024", "on 4 July", "the 3rd of May".
_DAY_BEFORE = re.compile(rf"\b(?:{_MONTH})\.?\s+\Z", re.I)
_DAY_AFTER = re.compile(rf"(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b", re.I)
_AFTER_BEFORE = re.compile(r"\b(?:after|within)\s+(?:another\s+|only\s+|just\s+)?\Z", re.I)
_TARGET_BEFORE = re.compile(r"\bto\s+(?:reach|get\s+to|make|hit|total|afford)\s+(?:a\s+total\s+of\s+)?\Z", re.I)
_DONE_BEFORE = re.compile(r"\b(?:after|before|by)\s+[a-z]+ing\s+(?:away\s+|up\s+|off\s+)?\Z", re.I)
_TIME_UNIT_AFTER = re.compile(r"[ \t]*(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b", re.I)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
#: "grew by 2000." is a change, not a year ("grew by 2,000 by 2020." closes with one).
_CHANGED_BY = re.compile(
    r"\b(?:rose|rises?|risen|increased?|grew|grows?|grown|fell|falls?|fallen|dropped|drops?|decreased?|declined?"
    r"|climbed|jumped|went\s+(?:up|down)|cut|reduced|raised|multiplied|divided|up|down|more|less)\s+by\s+\Z",
    re.I,
)
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;:!?)\]\n]|$)")
_CONCLUSION = re.compile(
    r"(?:^|[.!?:]\s|\n)[\s*_#>-]*+(?:so|therefore|thus|hence|altogether|overall|finally|in\s+total|in\s+all)\b",
    re.I,
)
_LOOKBACK = 24
_LABEL_NAMES = (
    "step question problem part exercise task case method approach example equation eq figure fig table section"
    " chapter scenario stage phase line point item"
)
_LABEL_WORDS = frozenset(_LABEL_NAMES.split())
_LABEL_HINT = re.compile(rf"\b(?:{'|'.join(sorted(_LABEL_WORDS, key=len, reverse=True))})s?\b")
_WORD_BEFORE = re.compile(r"([A-Za-z]+)\.?[ \t]*(?:#|[Nn]o\.)?[ \t]*\(?\Z")
#: "steps 2 and 3", "parts 1, 2 or 4", "lines 3 to 5": the members after the first label too.
_LABEL_LIST_GAP = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|to\s+|through\s+|thru\s+|&\s*|-|–)\s*")
# Words without which no precision or day of the month is there to find: most texts skip those looks.
_PRECISION_HINT = re.compile(r"decimal|d\.\s?p|dp|signific|sig|s\.\s?f|sf|nearest")
_MONTH_HINT = re.compile(rf"\b(?:{_MONTH})")
_PLAIN_RANGE = re.compile(r"[0-9]+\s*(?:to|through|thru|-|–|—)\s*[0-9]+")
_ORDINAL_AFTER = re.compile(r"(?:st|nd|rd|th)\b")


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
    """A four-digit year after "in", "since", "as of", "by", a month ... that ends its clause ("41 in
    2031."), or after "born", "founded" ... wherever the clause goes on."""
    if not (token.plain_integer and len(token.text) == 4 and token.text[0] in "12"):
        return False
    before = text[max(0, token.start - _LOOKBACK) : token.start]
    if _BORN.search(before):  # "born in 1990 in Ohio": a year wherever the clause goes on
        return True
    if _YEAR_BEFORE.search(before) is None or _CLAUSE_END.match(text, token.end) is None:
        return False
    return _CHANGED_BY.search(before) is None


def is_circumstance(text: str, token: NumberToken, previous: NumberToken | None) -> bool:
    """After another number of its sentence, a number that says when or what for, not how many: a
    time after "after" or "within" that ends its clause ("reaches 243 after 5 hours."), a target
    ("7 more points to reach 50"), what was done before ("14 shells after giving 6 to her sister").
    Alone in its sentence it is the answer ("They meet after 2.5 hours.")."""
    if (
        previous is None
        or token.value is None
        or token.not_one
        or _SENTENCE_END.search(text, previous.end, token.start)
    ):
        return False
    before = text[max(0, token.start - _LOOKBACK) : token.start]
    if _TARGET_BEFORE.search(before) or _DONE_BEFORE.search(before):
        return True
    unit = _TIME_UNIT_AFTER.match(text, token.end)
    return (
        unit is not None
        and _CLAUSE_END.match(text, unit.end()) is not None
        and _AFTER_BEFORE.search(before) is not None
    )


def conclusion_starts(text: str) -> list[int]:
    """Offsets where a concluding sentence begins ("So ...", "Therefore ...", "In total ...")."""
    return [m.end() for m in _CONCLUSION.finditer(text)]


def labels(text: str, tokens: list[NumberToken]) -> list[bool]:
    """For each number, whether it labels rather than counts: "Step 3", "steps 2 and 3", a precision
    ("to 2 decimal places", "to the nearest 10"), or an ordinal in digits that does not rank ("the
    12th term", "on the 18th"; "came 3rd" ranks)."""
    lower = text.lower()
    named = _LABEL_HINT.search(lower) is not None
    precise, dated = _PRECISION_HINT.search(lower) is not None, _MONTH_HINT.search(lower) is not None
    flags: list[bool] = []
    for i, token in enumerate(tokens):
        plain = token.plain_integer or _PLAIN_RANGE.fullmatch(token.text) is not None
        listed = i > 0 and flags[-1] and _listed(text, tokens[i - 1], token)
        flags.append(
            (plain and ((named and (_labelled(text, token) or listed)) or _ordinal(text, token)))
            or (plain and dated and _day(text, token))
            or (precise and is_precision(text, token))
        )
    return flags


def _labelled(text: str, token: NumberToken) -> bool:
    word = _WORD_BEFORE.search(text, max(0, token.start - 16), token.start)
    return word is not None and word.group(1).lower().removesuffix("s") in _LABEL_WORDS


def _listed(text: str, previous: NumberToken, token: NumberToken) -> bool:
    return _LABEL_LIST_GAP.fullmatch(text, previous.end, token.start) is not None


def _day(text: str, token: NumberToken) -> bool:
    """ "March 3", "4 July", "the 3rd of May": a date's day, not a count."""
    if len(token.text) > 2:
        return False
    return _DAY_BEFORE.search(text, max(0, token.start - 12), token.start) is not None or bool(
        _DAY_AFTER.match(text, token.end)
    )


def _ordinal(text: str, token: NumberToken) -> bool:
    """ "the 12th term is 45", "on the 18th": an ordinal in digits names, unless it ranks ("came 3rd")."""
    suffix = _ORDINAL_AFTER.match(text, token.end)
    return suffix is not None and not ranks(text, token.start, suffix.end())
