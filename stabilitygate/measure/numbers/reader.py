"""`number: true`: the number a text commits to, the rules in the order of docs/design.md §4.1.

0. The answer ends where a base model runs on into the next question (runon.py); a JSON answer
   is its answer field (structured.py); a text that declines to answer commits to nothing
   (refusals.py).
1. The last explicit answer ("The answer is 4 + 6 = 10." is 10, "The answer is seven." is 7).
2. Else the last number, where asides ("85 (of 90 possible)"), years closing a clause ("41 in
   2031."), labels ("Step 3", "to 2 decimal places"), circumstances ("after 5 hours"), a schedule
   worked out from a duration ("takes 45 minutes, so it is ready at 3:15"), code, checks and
   remarks after the answer are passed over; an output of the code stands; an answer stated first
   and explained stands (stated.py); an anchor (an equation's result, or the first number of a
   sentence that concludes: "So 13 ...") stands when the numbers after it only restate
   ("9 + 4 = 13. So 13 is the result of 9 + 4." is 13; see _only_restated).
3. A chain is read at its result: "12 + 7 = 19" is 19, "2/3 ≈ 0.67" is 2/3.
4. What is not one number is refused: a hedge ("8 or 9"), two values ("x = 2 or x = -3"), a
   conditional pair ("$12 online, or $15 at the door"), two quantities ("4 notebooks and 7 pens",
   pairs.py), a range, a ratio, a clock time, a root, an expression, a compound quantity; a
   restatement ("0.45, or 45%") is read where it is first stated.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from stabilitygate.measure.canonical import NoAnswer, canonical_fraction
from stabilitygate.measure.numbers.alternatives import committed
from stabilitygate.measure.numbers.chains import Chain, Numbers, last_value
from stabilitygate.measure.numbers.code import Code, code_in
from stabilitygate.measure.numbers.commentary import commentary_spans
from stabilitygate.measure.numbers.context import asides, conclusion_starts, is_circumstance, is_year, labels
from stabilitygate.measure.numbers.explicit import ANSWER_LEAD, explicit_answer
from stabilitygate.measure.numbers.links import LinkKind
from stabilitygate.measure.numbers.pairs import refuse_pairs
from stabilitygate.measure.numbers.refusals import refusal_in
from stabilitygate.measure.numbers.runon import answer_part
from stabilitygate.measure.numbers.scan import scan
from stabilitygate.measure.numbers.schedule import schedule_spans
from stabilitygate.measure.numbers.spans import Spans
from stabilitygate.measure.numbers.stated import stated_first
from stabilitygate.measure.numbers.structured import Field, Unnamed, json_answer
from stabilitygate.measure.numbers.tokens import MAX_DIGITS, MAX_EXPONENT, NumberToken

_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")
_MAX_CONCLUSION_REACH = 200  # characters from "So" to its number: further is another sentence's
_MAX_DEPTH = 2  # a JSON answer field holding text is read once more, no deeper


def read_number(text: str, *, decimal_comma: bool = False) -> int | float | str:
    """The number `text` commits to, in canonical form (canonical_fraction); NoAnswer when none."""
    return canonical_fraction(_read(text, decimal_comma, 0))


def _read(text: str, decimal_comma: bool, depth: int) -> Fraction:
    text = answer_part(text, ANSWER_LEAD)
    field = json_answer(text) if depth < _MAX_DEPTH else None
    if field is not None:
        return _field_value(field, decimal_comma, depth)
    numbers = scan(text, decimal_comma=decimal_comma)
    explicit = explicit_answer(numbers)
    refusal = refusal_in(text)
    if refusal is not None and (explicit is None or explicit.hypothetical or explicit.start < refusal.start()):
        raise NoAnswer(f"no committed answer: {refusal.group()!r}")
    if explicit is None:
        return _last_number(numbers)
    if explicit.value is None or explicit.chain is None:
        raise NoAnswer(explicit.reason or "no committed answer")
    refuse_pairs(numbers, explicit.chain, lambda: _counted(numbers))
    return explicit.value


def _field_value(field: Field | Unnamed, decimal_comma: bool, depth: int) -> Fraction:
    if isinstance(field, Unnamed):
        raise NoAnswer(f"the JSON names no answer among its numbers ({', '.join(field.keys)})")
    value = field.value
    if isinstance(value, bool) or not isinstance(value, int | Decimal | str):
        raise NoAnswer(f"the JSON answer {field.key!r} holds no number")
    if isinstance(value, str):
        return _read(value, decimal_comma, depth + 1)
    if isinstance(value, Decimal) and not value.is_finite():
        raise NoAnswer("the number is not finite")
    if isinstance(value, Decimal) and (
        abs(value.adjusted()) > MAX_EXPONENT or len(value.as_tuple().digits) > MAX_DIGITS
    ):
        raise NoAnswer("the number is out of range")  # 1e99999999 or 0.111… to a million places: no value to hold
    return Fraction(value)


def _last_number(numbers: Numbers) -> Fraction:
    chains = numbers.chains
    if not chains:
        raise NoAnswer("no number found")
    if len(chains) == 1:
        return last_value(numbers, committed(numbers, chains[0]))
    code, conclusions = code_in(numbers.text), conclusion_starts(numbers.text)
    candidates = _candidates(numbers, chains, _passed_spans(numbers, code, conclusions), frozenset(code.outputs))
    chosen = _output(numbers, candidates, code, conclusions) or _anchor_or_last(numbers, candidates, conclusions)
    read = committed(numbers, chosen)
    refuse_pairs(numbers, read, lambda: [i for chain in candidates for i in _span(chain)])
    return last_value(numbers, read)


def _candidates(numbers: Numbers, chains: list[Chain], passed: Spans, outputs: frozenset[int]) -> list[Chain]:
    """The chains that can be the answer (an output in code among them); when none is, all of them."""
    text, tokens = numbers.text, numbers.tokens
    aside, label = asides(text, tokens), labels(text, tokens)
    kept = [
        chain
        for chain in chains
        if not aside[chain.last]
        and not label[chain.last]
        and not (chain.first == chain.last and _circumstance(text, tokens, chain.first))
        and (tokens[chain.last].start not in passed or tokens[chain.first].start in outputs)
    ]
    return kept or chains


def _counted(numbers: Numbers) -> list[int]:
    """The numbers that count something: not in an aside, no label, no year or closing time."""
    text, tokens = numbers.text, numbers.tokens
    aside, label = asides(text, tokens), labels(text, tokens)
    return [i for i in range(len(tokens)) if not (aside[i] or label[i] or _circumstance(text, tokens, i))]


def _circumstance(text: str, tokens: list[NumberToken], i: int) -> bool:
    """A year closing its clause ("41 in 2031."), or a number that says when or what for ("243 after 5
    hours.", "7 more to reach 50"): not how many."""
    return is_year(text, tokens[i]) or is_circumstance(text, tokens[i], tokens[i - 1] if i else None)


def _passed_spans(numbers: Numbers, code: Code, conclusions: list[int]) -> Spans:
    """Code, and checks, remarks and a schedule once a number stands before them."""
    first = numbers.tokens[0].start
    commentary = [span for span in commentary_spans(numbers.text, conclusions) if span[0] > first]
    return Spans([*code.spans, *commentary, *schedule_spans(numbers.text, numbers.tokens)])


def _output(numbers: Numbers, candidates: list[Chain], code: Code, conclusions: list[int]) -> Chain | None:
    """The code's last output, unless a later equation or conclusion brings a new number."""
    outputs = set(code.outputs)
    shown = [chain for chain in candidates if numbers.tokens[chain.first].start in outputs]
    if not shown:
        return None
    output = shown[-1]
    seen = {numbers.tokens[i].value for chain in candidates if chain.last <= output.last for i in _span(chain)}
    anchors = _anchors(numbers, candidates, conclusions)
    return None if any(a.first > output.last and numbers.tokens[a.last].value not in seen for a in anchors) else output


def _span(chain: Chain) -> range:
    return range(chain.first, chain.last + 1)


def _anchor_or_last(numbers: Numbers, candidates: list[Chain], conclusions: list[int]) -> Chain:
    """The answer stated first and explained, else the last anchor when the numbers after it only
    restate, else the last chain."""
    anchors = _anchors(numbers, candidates, conclusions)
    stated = stated_first(numbers, candidates, anchors)
    if stated is not None:
        return stated
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


def _anchors(numbers: Numbers, candidates: list[Chain], starts: list[int]) -> list[Chain]:
    """Equations ("9 + 4 = 13") and the first number of concluding sentences, in text order."""
    anchors = {chain.first: chain for chain in candidates if numbers.has(chain, LinkKind.EQUALS)}
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
