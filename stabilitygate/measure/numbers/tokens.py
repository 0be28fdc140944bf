"""The numbers a text writes, each with its exact value (docs/design.md §4.1, "number").

A number is a decimal (`-1,234.5`, `$19`, `2 500 000`, `1e3`), a fraction (`3/4`, `\\frac{3}{4}`,
`\\dfrac34`), a mixed number (`3 1/4`, `3\\frac{1}{4}`, `3½`) or a vulgar fraction (`½`). Not
numbers: digits inside a word (`v2`, `H2O`), dotted runs (`3.11.2`, `01.02.2024`) and slash runs
(`12/25/2023`), which are versions and dates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

#: Exponents past this are no value we hold exactly (10**1000 is still cheap; 10**10**9 is not).
_MAX_EXPONENT = 1000
_SHORT = 30  # digits read with int(); longer runs go through Decimal (int() refuses past 4300)

_SIGN = r"[-+\u2212]"
_VULGAR = "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"
_SEPARATOR = re.compile(r"[^0-9.]")  # what joins digit groups: commas, spaces, {,} and \,
_START = r"(?<![\w./])"  # not inside a word, a dotted run or a slash run
_BRACED = r"\{\s*(?P<%s>-?[0-9]+(?:\.[0-9]+)?)\s*\}"
_NUMBER = re.compile(
    # Every number starts with one of these: rejecting other positions first makes the scan fast.
    rf"(?=[-+\u2212$\u20ac\u00a3\u00a5.0-9\\{_VULGAR}])(?:"
    # A slash run of three or more is a date: consumed, so that no number is read inside it.
    rf"(?P<date>{_START}[0-9]+(?:/[0-9]+){{2,}}(?![\w/]))"
    rf"|(?P<latex>{_START}(?P<lsign>{_SIGN})?(?:(?P<lwhole>[0-9]+)\s?)?\\[dt]?frac\s*"
    rf"(?:{_BRACED % 'lnum'}\s*{_BRACED % 'lden'}|(?P<lnum1>[0-9])(?P<lden1>[0-9])))"
    rf"|(?P<mixed>{_START}(?P<msign>{_SIGN})?(?P<mwhole>[0-9]+)[ \u00a0]"
    r"(?P<mnum>[0-9]+)/(?P<mden>[0-9]+)(?![\w/]|\.[0-9]))"
    rf"|(?P<vulgar>{_START}(?P<vsign>{_SIGN})?(?P<vwhole>[0-9]+)?\s?(?P<vchar>[{_VULGAR}]))"
    rf"|(?P<fraction>{_START}(?P<fsign>{_SIGN})?(?P<fnum>[0-9]+)/(?P<fden>[0-9]+)(?![\w/]|\.[0-9]))"
    # A comma (or LaTeX's {,}) joins only groups of three digits, as does a space, thin space,
    # no-break space or LaTeX's \, ; any other comma or space separates numbers.
    rf"|(?P<decimal>(?<![\w.])(?P<sign>{_SIGN})?(?:[$\u20ac\u00a3\u00a5]\s?)?(?P<sign2>{_SIGN})?"
    r"(?P<digits>(?:[0-9]{1,3}(?:(?:,|\{,\})[0-9]{3})+(?![0-9])"
    r"|[0-9]{1,3}(?:(?:[ \u00a0\u2009\u202f]|\\,)[0-9]{3})+(?![0-9/])"
    r"|[0-9]+)(?P<point>\.[0-9]+)?|(?P<point_only>\.[0-9]+))"
    r"(?:[eE](?P<exponent>[-+]?[0-9]+))?(?!\.?[0-9])(?P<truncated>\.\.\.|…)?))"
)


@dataclass(frozen=True, slots=True)
class NumberToken:
    """One number as written: where it is, its exact value, and how it was written."""

    start: int
    end: int
    text: str
    value: Fraction | None  # None: too large to hold (an exponent past ±1000)
    decimals: int | None = None  # digits written after the point; None for fractions (exact forms)
    truncated: bool = False  # a decimal cut short with "..." or "…" (0.666...)

    @property
    def plain_integer(self) -> bool:
        """Digits alone: no sign, currency, separator or point (so possibly a year)."""
        return self.text.isascii() and self.text.isdigit()


def number_tokens(text: str) -> list[NumberToken]:
    """Every number in `text`, in order."""
    return [token for match in _NUMBER.finditer(text) for token in _tokens_of(match)]


def _tokens_of(m: re.Match[str]) -> Iterator[NumberToken]:
    kind = m.lastgroup
    if kind == "decimal":
        yield _decimal(m)
    elif kind == "fraction":
        yield from _fraction(m)
    elif kind == "mixed":
        yield from _mixed(m)
    elif kind == "latex":
        yield from _latex(m)
    elif kind == "vulgar":
        yield _vulgar(m)


def _negative(sign: str | None) -> bool:
    return sign in ("-", "\u2212")


def _signed(value: Fraction, sign: str | None) -> Fraction:
    return -value if _negative(sign) else value


def _decimal(m: re.Match[str]) -> NumberToken:
    sign, sign2, written, point, point_only, exponent_text, cut = m.group(
        "sign", "sign2", "digits", "point", "point_only", "exponent", "truncated"
    )
    digits = written if written.isdigit() else _SEPARATOR.sub("", written)
    point = point or point_only or ""
    exponent = int(exponent_text or 0)
    truncated = bool(cut and point)
    end = m.end() if truncated or not cut else m.start("truncated")
    value = None
    if abs(exponent) <= _MAX_EXPONENT:
        value = _signed(_exact(digits, point, exponent), sign or sign2)
    decimals = max(0, len(point) - 1 - exponent)
    return NumberToken(m.start(), end, m.string[m.start() : end], value, decimals, truncated)


def _exact(digits: str, point: str, exponent: int) -> Fraction:
    if exponent or len(digits) > _SHORT:
        return Fraction(Decimal(digits)) * Fraction(10) ** exponent
    # The common case, without Decimal: int() and one power of ten are several times faster.
    if not point:
        return Fraction(int(digits))
    return Fraction(int(digits.replace(".", "") or 0), 10 ** (len(point) - 1))


def _integer(text: str, start: int, end: int) -> NumberToken:
    return NumberToken(start, end, text[start:end], Fraction(int(text[start:end])), 0)


def _fraction(m: re.Match[str]) -> Iterator[NumberToken]:
    numerator, denominator = int(m.group("fnum")), int(m.group("fden"))
    if denominator == 0:  # no fraction: two numbers, as "5/0" was read before fractions were
        yield _integer(m.string, m.start("fnum"), m.end("fnum"))
        yield _integer(m.string, m.start("fden"), m.end("fden"))
        return
    value = _signed(Fraction(numerator, denominator), m.group("fsign"))
    yield NumberToken(m.start(), m.end(), m.group(), value)


def _mixed(m: re.Match[str]) -> Iterator[NumberToken]:
    whole, numerator, denominator = int(m.group("mwhole")), int(m.group("mnum")), int(m.group("mden"))
    if not 0 < numerator < denominator:  # "3 5/4" or "3 1/0": a number, then a fraction
        yield _integer(m.string, m.start("mwhole"), m.end("mwhole"))
        rest = _NUMBER.match(m.string, m.start("mnum"))
        if rest is not None:
            yield from _tokens_of(rest)
        return
    value = _signed(whole + Fraction(numerator, denominator), m.group("msign"))
    yield NumberToken(m.start(), m.end(), m.group(), value)


def _latex(m: re.Match[str]) -> Iterator[NumberToken]:
    numerator = Fraction(Decimal(m.group("lnum") or m.group("lnum1")))
    denominator = Fraction(Decimal(m.group("lden") or m.group("lden1")))
    if denominator == 0:
        return
    value = _signed(int(m.group("lwhole") or 0) + numerator / denominator, m.group("lsign"))
    yield NumberToken(m.start(), m.end(), m.group(), value)


def _vulgar(m: re.Match[str]) -> NumberToken:
    part = Fraction(unicodedata.numeric(m.group("vchar"))).limit_denominator(10)
    value = _signed(int(m.group("vwhole") or 0) + part, m.group("vsign"))
    return NumberToken(m.start(), m.end(), m.group(), value)
