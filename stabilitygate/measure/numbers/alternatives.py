"""Answers offered side by side: a hedge ("8 or 9"), two values ("x = 1 and x = 5"), or one restated.

"X or Y" is one answer when the two are equal, or one is the other rounded to the decimals it
writes ("3.14, or 22/7"). "X, or Y" restates X in another form when Y is X as a percentage
("0.45, or 45%") or in another unit ("90 minutes, or 1.5 hours"), unless a hedge word comes with
it ("6, or maybe 7"). "which is" and "that is" restate the same way ("95 minutes, which is 1 hour and
35 minutes"). A restated answer is read where it is first stated, unless that is no single number
(docs/design.md §4.1).
"""

from __future__ import annotations

import re
from fractions import Fraction

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.chains import Chain, Numbers, chain_at
from stabilitygate.measure.numbers.links import ALTERNATIVE_GAP, LinkKind
from stabilitygate.measure.numbers.tokens import NumberToken

_PERCENT = re.compile(r"\s*(?:%|percent\b|per\s+cent\b)", re.I)
_UNIT = re.compile(r"[ \t]*(?P<unit>[A-Za-z]+)")


_SIDE_BY_SIDE = (LinkKind.ALTERNATIVE, LinkKind.ANOTHER, LinkKind.RESTATED)


def committed(numbers: Numbers, chain: Chain) -> Chain:
    """The chain to read: `chain`, or the statement it restates; NoAnswer when it is offered beside another."""
    after = chain.last + 1
    if after < len(numbers.tokens) and numbers.links[after].kind in _SIDE_BY_SIDE:
        _one_answer(numbers, chain.last, after)
    before = chain.first - 1
    if before >= 0 and numbers.links[chain.first].kind in _SIDE_BY_SIDE and _one_answer(numbers, before, chain.first):
        stated = chain_at(numbers, before)
        if not any(numbers.tokens[i].not_one for i in range(stated.first, stated.last + 1)):
            return stated
    return chain


def _one_answer(numbers: Numbers, left: int, right: int) -> bool:
    """Whether tokens[left] and tokens[right] are one answer written twice; NoAnswer when they are two."""
    a, b = numbers.tokens[left], numbers.tokens[right]
    kind = numbers.links[right].kind
    if same_answer(a, b):
        return True
    if kind is LinkKind.ANOTHER:
        raise NoAnswer(f"not one number: {numbers.text[a.start : b.end]}")
    another_form = _as_percentage(numbers.text, a, b) or bool(a.not_one or b.not_one)
    if kind is LinkKind.RESTATED:  # "95 minutes, which is 1 hour and 35 minutes"; else a remark, as it stands
        return another_form
    gap = ALTERNATIVE_GAP.fullmatch(numbers.text, a.end, b.start)
    if gap is not None and not gap.group("hedge") and (another_form or _other_units(numbers.text, gap, b)):
        return True
    raise NoAnswer(f"no committed answer: {a.text} or {b.text}")


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


def _as_percentage(text: str, a: NumberToken, b: NumberToken) -> bool:
    if a.value is None or b.value is None:
        return False
    if _PERCENT.match(text, b.end):
        return b.value == 100 * a.value
    return _PERCENT.match(text, a.end) is not None and a.value == 100 * b.value


def _other_units(text: str, gap: re.Match[str] | None, b: NumberToken) -> bool:
    """Each number is followed by a unit, and the two differ ("0.25 m, or 25 cm")."""
    first, second = gap.group("unit") if gap else None, _UNIT.match(text, b.end)
    return first is not None and second is not None and first.lower() != second.group("unit").lower()
