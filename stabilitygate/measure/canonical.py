"""Canonical answer values: equal answers compare equal with == whatever their surface form.

Also the one signal every parser shares: NoAnswer, raised when a text holds no answer of its kind.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from stabilitygate.typed_json import JSON

#: Integral numbers below this magnitude are reported as ints (42.0 -> 42), as JSON canonical forms do.
_EXACT_INT_LIMIT = 10**15


class NoAnswer(Exception):
    """Raised inside a parser: the text holds no answer of that kind."""


def canonical_number(value: Decimal | float | int) -> int | float:
    """42.0 -> 42, Decimal('1234.50') -> 1234.5, -0.0 -> 0; raises NoAnswer for NaN and infinities."""
    try:
        dec = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation as exc:
        raise NoAnswer(f"not a number: {value!r}") from exc
    if not dec.is_finite():
        raise NoAnswer("the number is not finite")
    if dec == dec.to_integral_value() and abs(dec) < _EXACT_INT_LIMIT:
        return int(dec)
    as_float = float(dec)
    if as_float in (float("inf"), float("-inf")):
        raise NoAnswer("the number is out of range")
    return as_float


#: A fraction whose terms pass this many bits is no answer anyone wrote (and str() of it is slow).
_MAX_FRACTION_BITS = 10_000


def canonical_fraction(value: Fraction) -> int | float | str:
    """An exact value in one form: 8/4 -> 2, 3/4 -> 0.75 (as canonical_number gives 0.75), 2/3 -> "2/3".

    A value with a finite decimal expansion is the number canonical_number gives for that decimal
    (the float nearest it, or an int), so 3/4, 0.75 and "0.75" are one answer; any other is the
    reduced fraction's text, exact and JSON-able, sign first ("-2/3").
    """
    denominator = value.denominator
    for factor in (2, 5):
        while denominator % factor == 0:
            denominator //= factor
    if denominator != 1:
        if max(value.numerator.bit_length(), value.denominator.bit_length()) > _MAX_FRACTION_BITS:
            raise NoAnswer("the number is out of range")
        return f"{value.numerator}/{value.denominator}"
    if value.denominator == 1 and abs(value.numerator) < _EXACT_INT_LIMIT:
        return int(value.numerator)
    try:
        as_float = float(value)
    except OverflowError as exc:
        raise NoAnswer("the number is out of range") from exc
    return as_float + 0.0  # a value too small for a float is 0.0, never -0.0


def _canonical_tree(value: object) -> JSON:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            return canonical_number(value)
        except NoAnswer:
            return str(value)  # NaN or infinity in an expected value: never equal to a parsed answer
    if isinstance(value, dict):
        return {str(k): _canonical_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical_tree(v) for v in value]
    return str(value)  # YAML dates and the like compare by their text


def canonical_json(value: object) -> str:
    """Sorted keys, compact separators, integral numbers as ints: equal documents give equal strings."""
    return json.dumps(_canonical_tree(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def scalar_text(value: object) -> str:
    """An expected scalar as a completion would write it: true/false as JSON does, "" for null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
