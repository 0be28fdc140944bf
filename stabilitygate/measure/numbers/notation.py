"""Notations that make one number of several pieces: powers, × 10^n, magnitude words, minor units.

`2^{10}` and `8²` are their powers; `6.02 × 10^23`, `4.8 × 10⁻¹⁹` and `3 \\times 10^{8}` one number each;
`3.5 million`, `2.4 billion`, `8.5 lakh`, `2.5 万`, `1,8 Millionen`, `$85k` and `$3.2B` their values
(docs/design.md §4.1 lists the words); `45 dollars and 50 cents` and `£2 50p` are 45.5 and 2.5.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction

from stabilitygate.measure.numbers.tokens import MAX_EXPONENT, NumberToken, bounded_int, refused

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_POWER = re.compile(
    r"\^\s*(?:\{\s*(?P<braced>[-+\u2212]?[0-9]+)\s*\}|(?P<plain>[-+\u2212]?[0-9]+))"
    r"|(?P<sup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
    r"|(?P<symbolic>\^\s*\{?\s*(?!\\circ)[A-Za-z\\])"
)
_UNIT = r"[A-Za-z\u00b5\u03bc\u03a9]{1,4}"
_UNIT_BEFORE_POWER = re.compile(rf"[0-9][ \t]*(?:{_UNIT}[/·⋅*. ])*(?P<last>{_UNIT})\s*(?:\^|\*\*)\s*\{{?\s*\Z")
_VARIABLES = frozenset("abnxyz")  # "5 x^2" is algebra, not a unit
_TIMES = re.compile(r"\s*(?:×|x|\*|·|⋅|✕|⨯|∙|\\times|\\cdot)\s*")
_MAX_BITS = 100_000  # a power past this many bits is no answer anyone wrote

_MAGNITUDE_WORDS = {
    "thousand": 3,
    "million": 6,
    "millions": 6,
    "billion": 9,
    "billions": 9,
    "trillion": 12,
    "lakh": 5,
    "lakhs": 5,
    "lac": 5,
    "crore": 7,
    "crores": 7,
    "tausend": 3,
    "millionen": 6,
    "mio": 6,
    "milliarde": 9,
    "milliarden": 9,
    "mrd": 9,
    "billionen": 12,
    "milliard": 9,
    "milliards": 9,
    "mille": 3,
    "mil": 3,
    "millón": 6,
    "millones": 6,
    "milione": 6,
    "milioni": 6,
    "miliardo": 9,
    "miliardi": 9,
    "milhão": 6,
    "milhões": 6,
    "bilhão": 9,
    "bilhões": 9,
    "dozen": 0,  # not a power of ten: handled below
}
_WORDS = "|".join(sorted(_MAGNITUDE_WORDS, key=len, reverse=True))
_MAGNITUDE = re.compile(
    rf"(?:\s+|\s?(?=[kK](?![A-Za-z])))(?P<word>mil\s+millones|{_WORDS}|[kK])\.?(?![A-Za-z\u00c0-\u024f])"
    r"|\s?(?P<cjk>[万萬亿億千百兆]+)",
    re.I,
)
_CJK = {"百": 2, "千": 3, "万": 4, "萬": 4, "亿": 8, "億": 8, "兆": 12}
_SHORT_SCALE = re.compile(r"\s?(?P<word>bn|mn|[MBm])(?![A-Za-z])")  # only after a currency sign: "$3.2B"
_CURRENCY = frozenset("$\u20ac\u00a3\u00a5\u20b9")
_MAJOR = re.compile(r"\s*(?:dollars?|euros?|pounds?|bucks|USD|EUR|GBP)?\s*(?:,\s*|and\s+)?", re.I)
_MINOR = re.compile(r"\s*(?:cents?|pence|p|ct)(?![A-Za-z])", re.I)
_MAJOR_WORD = re.compile(r"\s*(?:dollars?|euros?|pounds?|bucks|USD|EUR|GBP)\b", re.I)


def with_notations(text: str, tokens: list[NumberToken]) -> list[NumberToken]:
    """The tokens with each notation's pieces merged into one number, and units' powers dropped."""
    if "^" in text or "**" in text:
        tokens = [token for token in tokens if not _unit_power(text, token)]
    for read, hint in _STEPS:
        if hint is None or hint.search(text):  # a cheap look: most texts need few of the steps
            tokens = _each(text, tokens, read)
    return tokens


def _merge(tokens: list[NumberToken], merged: NumberToken, index: int) -> int:
    """Put `merged` at `index`, dropping the tokens it covers; the index of the next token."""
    tokens[index] = merged
    following = index + 1
    while following < len(tokens) and tokens[following].start < merged.end:
        del tokens[following]
    return following


#: Reads a notation at a token (and the token after it, when there is one): the merged token, or None.
_Reader = Callable[[str, NumberToken, NumberToken | None], NumberToken | None]


def _each(text: str, tokens: list[NumberToken], read: _Reader) -> list[NumberToken]:
    """`read` at each token in turn: a merged token replaces those it covers."""
    tokens = list(tokens)
    i = 0
    while i < len(tokens):
        merged = read(text, tokens[i], tokens[i + 1] if i + 1 < len(tokens) else None)
        i = _merge(tokens, merged, i) if merged is not None else i + 1
    return tokens


def _power_at(text: str, token: NumberToken, _: NumberToken | None) -> NumberToken | None:
    m = _POWER.match(text, token.end)
    if m is None or token.not_one:
        return None
    end_text = text[token.start : m.end()]
    if m.group("symbolic"):
        return refused(replace(token, end=m.end(), text=end_text), f"{end_text} is an expression, not one number")
    written = (m.group("braced") or m.group("plain") or (m.group("sup") or "").translate(_SUPERSCRIPTS)).replace(
        "\u2212", "-"
    )
    value = _power(token.value, bounded_int(written))
    return NumberToken(token.start, m.end(), end_text, value, None)


def _unit_power(text: str, token: NumberToken) -> bool:
    """The exponent of a unit after a number ("48 m^2", "9.8 m/s^2", "7.9 g/cm^{3}"): part of the unit."""
    if not token.text.lstrip("-\u2212").isdigit() or len(token.text) > 3:
        return False
    unit = _UNIT_BEFORE_POWER.search(text, max(0, token.start - 24), token.start)
    return unit is not None and unit.group("last") not in _VARIABLES


def _power(base: Fraction | None, exponent: int | None) -> Fraction | None:
    if base is None or exponent is None or abs(exponent) > MAX_EXPONENT or (base == 0 and exponent < 0):
        return None
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if bits * abs(exponent) > _MAX_BITS:
        return None
    sign = -1 if base < 0 else 1  # -2^2 is -(2^2), as written
    return sign * abs(base) ** exponent


def _scientific_at(text: str, mantissa: NumberToken, power: NumberToken | None) -> NumberToken | None:
    """`6.02 × 10^23`: a number times a power of ten written as one."""
    if power is None:
        return None
    times = _TIMES.fullmatch(text, mantissa.end, power.start)
    if times is None or not _is_power_of_ten(power) or mantissa.not_one or power.not_one:
        return None
    value = None if mantissa.value is None or power.value is None else mantissa.value * power.value
    return NumberToken(mantissa.start, power.end, text[mantissa.start : power.end], value, None)


def _is_power_of_ten(token: NumberToken) -> bool:
    return token.text.startswith("10") and token.text[2:3] in ("^", *"⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")


def _magnitude_at(text: str, token: NumberToken, _: NumberToken | None) -> NumberToken | None:
    if token.value is None or token.not_one:
        return None
    m = _MAGNITUDE.match(text, token.end)
    factor: int | None = None
    if m is not None and m.group("cjk"):
        exponent = sum(_CJK[char] for char in m.group("cjk"))
        factor = 10**exponent if exponent <= MAX_EXPONENT else None  # "5万万万…": out of range
        if factor is None:
            return NumberToken(token.start, m.end(), text[token.start : m.end()], None, None)
    elif m is not None:
        word = " ".join(m.group("word").lower().split())
        factor = 12 if word == "dozen" else 10 ** (9 if word == "mil millones" else _MAGNITUDE_WORDS.get(word, 3))
    elif token.text.lstrip("-+\u2212")[:1] in _CURRENCY:
        m = _SHORT_SCALE.match(text, token.end)
        if m is not None:
            factor = 10**9 if m.group("word") in ("B", "bn") else 10**6
    if m is None or factor is None:
        return None
    return NumberToken(token.start, m.end(), text[token.start : m.end()], token.value * factor, None)


def _cjk_sum_at(text: str, high: NumberToken, low: NumberToken | None) -> NumberToken | None:
    """`1億2千万`: CJK magnitudes written one after another add up."""
    if low is None or low.start != high.end or not (_ends_cjk(high) and _ends_cjk(low)):
        return None
    if high.value is None or low.value is None or abs(low.value) >= abs(high.value):
        return None
    return NumberToken(high.start, low.end, text[high.start : low.end], high.value + low.value, None)


def _ends_cjk(token: NumberToken) -> bool:
    return token.text[-1:] in _CJK


def _minor_unit_at(text: str, major: NumberToken, minor: NumberToken | None) -> NumberToken | None:
    """`45 dollars and 50 cents`, `$3 and 75 cents`, `2 pounds 50 pence`: one amount."""
    if minor is None:
        return None
    gap = _MAJOR.fullmatch(text, major.end, minor.start)
    ending = _MINOR.match(text, minor.end)
    whole = major.decimals == 0 or major.value is None  # out of range, the cents with it
    if gap is None or ending is None or minor.value is None or not whole:
        return None
    named = major.text.lstrip("-+\u2212")[:1] in _CURRENCY or _MAJOR_WORD.match(text, major.end) is not None
    if not named or not (minor.plain_integer and len(minor.text) <= 2):
        return None
    value = None
    if major.value is not None:
        value = major.value + (-1 if major.value < 0 else 1) * Fraction(int(minor.text), 100)
    return NumberToken(major.start, ending.end(), text[major.start : ending.end()], value, 2)


_POWER_HINT = re.compile(r"[\^⁰¹²³⁴⁵⁶⁷⁸⁹]")
_STEPS: list[tuple[_Reader, re.Pattern[str] | None]] = [
    (_power_at, _POWER_HINT),
    (_scientific_at, _POWER_HINT),
    (_magnitude_at, None),
    (_cjk_sum_at, re.compile(f"[{''.join(_CJK)}]")),
    (_minor_unit_at, re.compile(r"[Cc]ent|[Pp]ence|[0-9] ?p\b|ct\b")),
]
