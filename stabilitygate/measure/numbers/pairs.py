"""Two answers in one sentence: one under each of two conditions, or counts of two different things.

"$12 if you book online, or $15 at the door", "40 with the discount and 50 without it", "If it
ships Monday, 3 days; if Friday, 5", "$5, otherwise free": the text commits to neither. "4 notebooks and 7 pens", "8 cm
long and 5 cm wide", "5 km in 25 minutes": two quantities, and which one is asked is not written.
Either way the answer is refused (docs/design.md §4.1). A total stated first and then split ("32
students: 18 boys and 14 girls") is read at the total before this is asked (stated.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Chain, Numbers
from stabilitygate.measure.numbers.tokens import NumberToken

_SENTENCE_END = re.compile(r"[.!?](?=\s|\Z)|\n")
_CONDITION = re.compile(r"\b(?:if|when|unless|with|without|assuming|provided|otherwise|except|for)\b", re.I)
#: What joins two alternatives; the last one between the two numbers splits their sides.
_JOINER = re.compile(r";|,?\s*\b(?:or|and|otherwise|but|while|whereas)\b|,", re.I)
_CLAUSE_BREAK = re.compile(r"[,;:]")
_OTHERWISE = re.compile(r"\b(?:otherwise|or\s+else)\b", re.I)
_WORD = r"[^\W\d_]+"
#: "4 notebooks and 7 pens", "9 cards and Ben has 15", "5 km in 25", "23 ducks, 11": a thing named
#: after the first number, then "and", ",", "plus", "in" or "with", and after all but "," at most
#: three words (a new subject and its verb).
_TWO_THINGS_GAP = re.compile(
    rf"[ \t]+(?P<thing>{_WORD}(?:[ \t]+{_WORD}){{0,3}})\.?[ \t]*"
    r"(?P<joiner>,[ \t]*(?:and[ \t]+)?|[ \t]+(?:and|plus|in|with)[ \t]+)"
    rf"(?P<between>(?:{_WORD}[ \t]+){{0,3}})"
)
_THING_AFTER = re.compile(rf"[ \t]+(?:for[ \t]+)?(?P<thing>{_WORD}(?:[ \t]+{_WORD}){{0,3}})")
_TOTAL_AFTER = re.compile(
    rf"(?:[ \t]+{_WORD})?[ \t]+(?:in[ \t]+all|in[ \t]+total|altogether|together|overall|combined)\b", re.I
)
#: Words after which the second number concludes or restates ("17 broken, so 100 can be used").
_GOES_ON_WORDS = (
    "so thus then therefore hence giving leaving making which that or ie i.e also now still since because as if"
    " when where after before"
)
_GOES_ON = frozenset(_GOES_ON_WORDS.split())
_NO_THING_WORDS = (
    "and or so in at to of is are was were can will the a an each per more left remain remains altogether together"
    " overall total all"
)
_NO_THING = frozenset(_NO_THING_WORDS.split())
_MAX_SHOWN = 60


def refuse_pairs(numbers: Numbers, chain: Chain, partners: Callable[[], Iterable[int]]) -> None:
    """NoAnswer when another number of the chain's sentence (among `partners()`, asked only when its
    sentence holds another number) is offered beside it."""
    text, tokens = numbers.text, numbers.tokens
    answer = tokens[chain.last]
    start, end = _sentence_around(text, tokens[chain.first].start, answer.end)
    if _TOTAL_AFTER.match(text, answer.end):
        return  # "€35 for the shoes and €12 for socks, €47 altogether": the total of the others
    otherwise = _OTHERWISE.search(text, answer.end, end)
    if otherwise is not None:  # "$5 for orders under $50, otherwise it's free": only under a condition
        raise NoAnswer(f"no committed answer: {_shown(text, tokens[chain.first].start, end)}")
    if not any(start <= token.start < end for token in _others(tokens, chain)):
        return
    inside = [i for i in partners() if not chain.first <= i <= chain.last and start <= tokens[i].start < end]
    for i in inside:
        other = tokens[i]
        if other.value is None or other.value == answer.value:
            continue
        first, second = (other, answer) if other.start < answer.start else (answer, other)
        if _conditional(text, first, second, start, end):
            raise NoAnswer(f"no committed answer: {_shown(text, first.start, second.end)}")
        things_end = _two_things(text, first, second) if _adjacent(i, chain) else None
        if things_end is not None:
            raise NoAnswer(f"not one number: {_shown(text, first.start, things_end)}")


def _others(tokens: list[NumberToken], chain: Chain) -> list[NumberToken]:
    """The numbers right before and after the chain: when neither shares its sentence, no number does."""
    return [*tokens[max(0, chain.first - 1) : chain.first], *tokens[chain.last + 1 : chain.last + 2]]


def _sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    before = [m.end() for m in _SENTENCE_END.finditer(text, max(0, start - 300), start)]
    after = _SENTENCE_END.search(text, end)
    return (before[-1] if before else max(0, start - 300)), (after.start() if after else len(text))


def _conditional(text: str, first: NumberToken, second: NumberToken, start: int, end: int) -> bool:
    """Each number under its own condition, or an "or" between them with a condition on either side."""
    joiners = list(_JOINER.finditer(text, first.end, second.start))
    if not joiners:
        return False
    words = [m for m in joiners if m.group() != ","]
    joiner = (words or joiners)[-1]  # "; if it ships Friday, in 5": the ";" splits, not the comma
    clause_start = max(
        [m.end() for m in _CLAUSE_BREAK.finditer(text, start, first.start) if m.group() == ";"] or [start]
    )
    second_clause_end = _CLAUSE_BREAK.search(text, second.end, end)
    first_side = _CONDITION.search(text, clause_start, joiner.start()) is not None
    second_side = (
        _CONDITION.search(joiner.group()) is not None
        or _CONDITION.search(text, joiner.end(), second.start) is not None
        or _CONDITION.search(text, second.end, second_clause_end.start() if second_clause_end else end) is not None
    )
    alternative = re.search(r"\bor\b", joiner.group(), re.I) is not None
    return (first_side and second_side) or (alternative and (first_side or second_side))


def _adjacent(i: int, chain: Chain) -> bool:
    return i == chain.first - 1 or i == chain.last + 1


def _two_things(text: str, first: NumberToken, second: NumberToken) -> int | None:
    """Where the second thing's name ends, when the two numbers count two different things."""
    gap = _TWO_THINGS_GAP.fullmatch(text, first.end, second.start)
    after = _THING_AFTER.match(text, second.end)
    if gap is None or after is None:
        return None
    named, following = gap.group("thing").lower().split(), after.group("thing").lower().split()
    if following[0] in _NO_THING or _TOTAL_AFTER.match(text, second.end):
        return None  # "7.5 kg together", "100 can be used": a total or a verb, no second thing
    between = gap.group("between").lower().split()
    if between and (between[0] in _GOES_ON or gap.group("joiner").strip() == ","):
        return None  # "17 broken, so 100 can be used", "With 3 joining, there are 8": one clause leads to the next
    if not between and [_singular(w) for w in named] == [_singular(w) for w in following[: len(named)]]:
        return None  # "2.5 kg, 7.5 kg": one thing, counted twice
    return after.start("thing") + len(following[0])


def _singular(word: str) -> str:
    return word.removesuffix("s")


def _shown(text: str, start: int, end: int) -> str:
    shown = " ".join(text[start:end].split())
    return shown if len(shown) <= _MAX_SHOWN else shown[: _MAX_SHOWN - 1] + "…"
