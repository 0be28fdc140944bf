"""An answer stated first, then explained: "She has 15 apples left. She started with 20, ate 3 ...".

The first statement of the text (up to its first sentence end, colon, or ", since" / ", because")
holds one number, and what follows explains it: the statement is the number alone on a line of its
own ("**$96**", "42 seats."), or what follows opens with an explanation ("Here's why", "Because",
"Explanation:"), or the statement reads as a result (it ends with a colon, holds a word
such as total, left, need, final or minimum, or is the number alone with at most three words:
"**42 seats.**", "It's 12.") and the numbers after it work it out (their sum or product, the
first less the others, one inverted, products of pairs added up, or two of them added, subtracted, multiplied or
divided, a division rounded up: "7 buses. With 50 a bus, 320 students ..."; a percentage also as a fraction). Then
the stated number is the answer, unless a later equation or concluding sentence ("So ...") brings
another value, the last sentence states a result ("... He has 5 left."), or the statement sets out
a premise ("Each box holds 6", "If ..."). "The car travels 60 miles per hour. In 3 hours it goes
180 miles." works towards 180 (docs/design.md §4.1).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from itertools import combinations

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Chain, Numbers, last_value
from stabilitygate.measure.numbers.tokens import NumberToken

_STATEMENT_END = re.compile(r"[.!?](?=\s|\Z)|\n|:(?=\s)|,(?=\s+(?:since|because)\b)")
_PREMISE = re.compile(r"[\s*_#>-]*+(?:each|every|per|if|suppose|assume|assuming|let|given|when)\b", re.I)
_EXPLANATION = re.compile(
    r"[\s*_#>-]*+(?:here['’]?s\s+(?:why|how|the\s+(?:math|breakdown|reasoning|working))|here\s+is\s+(?:why|how)"
    r"|explanation|reasoning|justification|breakdown|working|work(?:ing)?\s*:|why\s*:|how\s*:|because|since"
    r"|(?:this|that)\s+is\s+because|(?:this|that)['’]s\s+because|to\s+see\s+(?:why|this))\b",
    re.I,
)
#: A last sentence that states a result: the text worked towards it, it did not explain a first one.
_RESULT = re.compile(
    r"\b(?:left|remain(?:s|ing)?|now|in\s+total|total|in\s+all|altogether|overall|so|therefore|thus|hence"
    r"|finally|in\s+the\s+end|ends?\s+up|leaving|giving|making|keeping|which\s+makes|that\s+makes)\b",
    re.I,
)
#: A statement that gives a result rather than a premise ("She has 15 apples left", "The total cost
#: is $240", "You'll need 7 buses"); "The car travels 60 miles per hour" sets out what is given.
_RESULT_WORD = re.compile(
    r"\b(?:total|in\s+all|altogether|overall|left|remain(?:s|ing)?|final|need(?:s|ed)?|minimum|maximum|least|most"
    r"|answer|result|comes?\s+to|works?\s+out|required|sum|difference|product)\b",
    re.I,
)
_WORDS = re.compile(r"[^\W\d_]+")
_OWN_LINE = re.compile(r"[^\w\n]*\n")  # the rest of the line is markup
_BARE_WORDS = 3
_PERCENT = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.I)
_MAX_PAIRS = 20  # numbers after the statement tried two by two: beyond, an explanation that long is a new line of work


def stated_first(numbers: Numbers, candidates: list[Chain], anchors: list[Chain]) -> Chain | None:
    """The first statement's chain when what follows explains it; None otherwise."""
    text, tokens = numbers.text, numbers.tokens
    stated = candidates[0]
    end = _STATEMENT_END.search(text, tokens[stated.last].end)
    if end is None or _PREMISE.match(text):
        return None
    rest = [chain for chain in candidates[1:] if tokens[chain.first].start >= end.end()]
    if not rest or len(rest) < len(candidates) - 1:  # another number in the statement itself
        return None
    value = _value(numbers, stated)
    if value is None or any(_value(numbers, a) != value for a in anchors if a.first > stated.last):
        return None
    if _RESULT.search(text, _sentence_start(text, tokens[rest[-1].last].start)):
        return None  # "He gives 4 to Ann and 3 to Ben. He has 5 left.": the last sentence concludes
    targets = {value, value / 100} if _PERCENT.match(text, tokens[stated.last].end) else {value}
    bare = _bare(text[: end.start()], tokens[stated.first].start, tokens[stated.last].end)
    if _EXPLANATION.match(text, end.end()) or (bare and _OWN_LINE.match(text, tokens[stated.last].end)):
        return stated  # "**$96**\n\nShe buys ...": an answer on a line of its own, then its working
    statement = text[: end.start()]
    answer_like = end.group() == ":" or bare or _RESULT_WORD.search(statement)  # ":" sets out its parts
    if answer_like and any(_works_out(t, _values(tokens, rest)) for t in targets):
        return stated
    return None


def _bare(statement: str, start: int, end: int) -> bool:
    """A statement that is the number alone, with markup and up to three words ("**42 seats.**", "It's 12")."""
    return len(_WORDS.findall(statement[:start] + " " + statement[end:])) <= _BARE_WORDS


def _sentence_start(text: str, pos: int) -> int:
    ends = [m.end() for m in _STATEMENT_END.finditer(text, max(0, pos - 300), pos)]
    return ends[-1] if ends else max(0, pos - 300)


def _value(numbers: Numbers, chain: Chain) -> Fraction | None:
    try:
        return last_value(numbers, chain)
    except NoAnswer:  # no single number states no answer to explain
        return None


def _values(tokens: list[NumberToken], chains: list[Chain]) -> list[Fraction]:
    return [
        token.value
        for chain in chains
        for token in tokens[chain.first : chain.last + 1]
        if token.value is not None and not token.not_one
    ]


def _works_out(target: Fraction, values: list[Fraction]) -> bool:
    """Whether the explanation's numbers make the stated one (all together, or two of them)."""
    if not values:
        return False
    together = [sum(values), math.prod(values), values[0] - sum(values[1:]), *(1 / v for v in values if v)]
    if len(values) % 2 == 0:  # "3 shirts at $20 and 2 hats at $18": 3 × 20 + 2 × 18
        together.append(sum(a * b for a, b in zip(values[::2], values[1::2], strict=True)))
    if target in together:
        return True
    return any(target in _pair_results(a, b) for a, b in combinations(values[:_MAX_PAIRS], 2))


def _pair_results(a: Fraction, b: Fraction) -> list[Fraction]:
    results = [a + b, abs(a - b), a * b]
    for top, bottom in ((a, b), (b, a)):
        if bottom:
            results += [top / bottom, Fraction(math.ceil(top / bottom))]
    return results
