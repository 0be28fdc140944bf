"""`number: true`: the number a text commits to, the rules in the order of docs/design.md §4.1.

1. The last explicit answer ("The answer is 4 + 6 = 10." is 10, "The answer is seven." is 7).
2. Else the last number, where asides ("85 (of 90 possible)") and years closing a clause
   ("41 in 2031.") are passed over, and an anchor (an equation's result, or the first number of
   a sentence that concludes: "So 13 ...") stands when the numbers after it only restate
   ("9 + 4 = 13. So 13 is the result of 9 + 4." is 13; see _only_restated).
3. Either way a chain gives its result ("= 10") or its exact form ("2/3 ≈ 0.67" is 2/3), and a
   number offered beside another with "or" ("8 or 9") is no committed answer.
"""

from __future__ import annotations

import re
from fractions import Fraction

from stabilitygate.measure.canonical import NoAnswer, canonical_fraction
from stabilitygate.measure.numbers.chains import Chain, Numbers, hedge, last_value
from stabilitygate.measure.numbers.context import asides, conclusion_starts, is_year
from stabilitygate.measure.numbers.explicit import explicit_answer
from stabilitygate.measure.numbers.links import LinkKind, links_of
from stabilitygate.measure.numbers.tokens import number_tokens

_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_MAX_CONCLUSION_REACH = 200  # characters from "So" to its number: further is another sentence's


def read_number(text: str) -> int | float | str:
    """The number `text` commits to, in canonical form (canonical_fraction); NoAnswer when none."""
    tokens = number_tokens(text)
    numbers = Numbers(text, tokens, links_of(text, tokens))
    explicit = explicit_answer(numbers)
    if explicit is not None:
        if explicit.value is None:
            raise NoAnswer(f"no committed answer: {explicit.hedge}")
        return canonical_fraction(explicit.value)
    return canonical_fraction(_last_number(numbers))


def _last_number(numbers: Numbers) -> Fraction:
    chains = numbers.chains
    if not chains:
        raise NoAnswer("no number found")
    candidates = _candidates(numbers, chains)
    chosen = _anchor_or_last(numbers, candidates)
    hedged = hedge(numbers, chosen)
    if hedged is not None:
        raise NoAnswer(f"no committed answer: {hedged}")
    return last_value(numbers, chosen)


def _candidates(numbers: Numbers, chains: list[Chain]) -> list[Chain]:
    """The chains that can be the answer: asides and closing years only when nothing else is left."""
    aside = asides(numbers.text, numbers.tokens)
    kept = [
        chain
        for chain in chains
        if not aside[chain.last]
        and not (chain.first == chain.last and is_year(numbers.text, numbers.tokens[chain.first]))
    ]
    return kept or chains


def _anchor_or_last(numbers: Numbers, candidates: list[Chain]) -> Chain:
    """The last anchor when the numbers after it only restate, else the last chain."""
    anchors = _anchors(numbers, candidates)
    if anchors and _only_restated(numbers, anchors[-1], candidates):
        return anchors[-1]
    return candidates[-1]


def _only_restated(numbers: Numbers, anchor: Chain, candidates: list[Chain]) -> bool:
    """Every number after the anchor repeats one written before it, and they either name the
    anchor's number again ("So 13 is 9 + 4") or stay in its sentence ("24 cookies, in 3 batches
    of 8"): a new sentence of old numbers alone may be a new step ("gives away 5, so 10 left")."""
    later = [i for chain in candidates if chain.first > anchor.last for i in range(chain.first, chain.last + 1)]
    if not later:
        return True
    repeats = numbers.repeats()
    if not all(repeats[i] for i in later):
        return False
    named = numbers.tokens[anchor.last].value
    if any(numbers.tokens[i].value == named for i in later):
        return True
    start, end = numbers.tokens[anchor.last].end, numbers.tokens[later[-1]].start
    return _SENTENCE_END.search(numbers.text, start, end) is None


def _anchors(numbers: Numbers, candidates: list[Chain]) -> list[Chain]:
    """Equations ("9 + 4 = 13") and the first number of concluding sentences, in text order."""
    anchors = {chain.first: chain for chain in candidates if numbers.has(chain, LinkKind.EQUALS)}
    starts = conclusion_starts(numbers.text)
    pending = iter(candidates)
    chain = next(pending, None)
    for start in starts:
        while chain is not None and numbers.tokens[chain.first].start < start:
            chain = next(pending, None)
        if chain is not None and _same_sentence(numbers.text, start, numbers.tokens[chain.first].start):
            anchors[chain.first] = chain
    return [anchors[first] for first in sorted(anchors)]


def _same_sentence(text: str, start: int, end: int) -> bool:
    return end - start <= _MAX_CONCLUSION_REACH and _SENTENCE_END.search(text, start, end) is None
