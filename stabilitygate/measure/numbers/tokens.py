"""The numbers a text writes, each with its exact value (docs/design.md §4.1, "number").

A number is a decimal (`-1,234.5`, `$19`, `2 500 000`, `1e3`, `17,5`, `1.234,50`, `₹1,00,000`;
`numerals.py` reads the grouping), a fraction (`3/4`, `\\frac{3}{4}`, `\\dfrac34`), a mixed number
(`3 1/4`, `3\\frac{1}{4}`, `3½`) or a vulgar fraction (`½`). Some things that look like numbers are
none, and say why when they are read as an answer: a ratio or clock time (`3:2`, `4:35 PM`), a
tuple (`(2, -1)`), a number with ± (`±4`). Dates and versions hold no number at all (`12/25/2023`,
`2024-01-15`, `3.11.2`, `01.02.2024`), nor do digits inside a word (`v2`, `H2O`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from functools import cache
from itertools import islice

from stabilitygate.measure.numbers.numerals import Piece, Run, pieces

#: Exponents past this are no value we hold exactly (10**1000 is still cheap; 10**10**9 is not).
MAX_EXPONENT = 1000
#: A number written with more digits than this is no plausible answer: out of range, never converted
#: (int() refuses runs past 4,300 digits, and converting long runs costs the square of their length).
MAX_DIGITS = 1000
_SHORT = 30  # digits read with int(); longer runs go through Decimal (int() refuses past 4300)

_SIGN = r"[-+\u2212\u00b1]"
#: A minus written loosely before an amount: an en dash ("–$150") or a spaced hyphen ("is - $30"),
#: where no number stands before it ("$40 - $55" subtracts; "12–15" is a range).
_MONEY = "[$\u20ac\u00a3\u00a5\u20b9]"
_LOOSE_MINUS = rf"(?<![0-9%)\]])(?<![0-9%)\]]\s)(?:\u2013(?={_MONEY}?[0-9])|[-\u2013][ \t](?={_MONEY}))"
_CURRENCY = "$\u20ac\u00a3\u00a5\u20b9"
_VULGAR = "½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅐⅛⅜⅝⅞⅑⅒"
_LETTER = r"A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"  # Latin letters: "v2" and "H2O" are words
_START = rf"(?<![0-9{_LETTER}_./])"  # not inside a word, a dotted run or a slash run
_BRACED = r"\{\s*(?P<%s>-?[0-9]+(?:\.[0-9]+)?)\s*\}"
# What joins the digit groups of one run; numerals.py decides what the run means.
_JOIN = r"(?:[,.](?=[0-9])|,\\!(?=[0-9])|\{,\}(?=[0-9])|(?:[ \u00a0\u2009\u202f]|\\[,! ])(?=[0-9]{3}(?![0-9/])))"
_MEMBER = r"[-+\u2212]?[0-9]+(?:\.[0-9]+)?"
_TUPLE_SEPARATOR = {False: r"\s*[,;]\s*", True: r"\s*(?:,\s|;)\s*"}  # with decimal commas, "2,5" is a number
_COMMON = re.compile(r"(?P<whole>[1-9][0-9]{0,2}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<fraction>[0-9]+))?")
_DROP_DIGITS = str.maketrans("", "", "0123456789")
_MERIDIEM = rf"(?:[AaPp][Mm]|[AaPp]\.[Mm]\.)(?![{_LETTER}])"  # "pm", "a.m."; not "5 amps"
#: A time of day: "4:35", "4:35 PM", "3 pm", "7 o'clock".
CLOCK = re.compile(rf"[0-9]{{1,2}}(?:(?::[0-5][0-9]){{1,2}}(?:\s?{_MERIDIEM})?|\s?(?:{_MERIDIEM}|o['’]clock))")


@dataclass(frozen=True, slots=True)
class NumberToken:
    """One number as written: where it is, its exact value, and how it was written."""

    start: int
    end: int
    text: str
    value: Fraction | None  # None: too large to hold (an exponent past ±1000), or not one number
    decimals: int | None = None  # digits written after the point; None for fractions (exact forms)
    truncated: bool = False  # a decimal cut short with "..." or "…" (0.666...)
    not_one: str | None = None  # why this is not one number ("3:2 is a ratio or a clock time")

    @property
    def plain_integer(self) -> bool:
        """Digits alone: no sign, currency, separator or point (so possibly a year)."""
        return self.text.isascii() and self.text.isdigit()


def refused(token: NumberToken, why: str) -> NumberToken:
    """The token marked as no single number, with the reason a parse failure will give."""
    return replace(token, not_one=why)


@cache
def _pattern(decimal_comma: bool) -> re.Pattern[str]:
    return re.compile(
        # Every number starts like this: rejecting other positions first makes the scan fast (and a run
        # of "(" or "$" costs one look each, not one per alternative).
        rf"(?=[0-9.\\{_VULGAR}]|[(\[]\s*[-+\u2212]?[0-9]"
        rf"|[-+\u2212\u2013\u00b1{_CURRENCY}][ \t]?(?:[{_CURRENCY}]\s?)?[-+\u2212\u00b1]?[0-9.\\{_VULGAR}])(?:"
        # Dates are consumed, so that no number is read inside them.
        rf"(?P<date>{_START}(?:[0-9]+(?:/[0-9]+){{2,}}|[12][0-9]{{3}}-[01][0-9]-[0-3][0-9])(?![\w/-]))"
        rf"|(?P<colon>{_START}(?:[0-9]+(?::[0-9]+)+(?![0-9])(?:\s?{_MERIDIEM})?|[0-9]{{1,2}}\s?(?:{_MERIDIEM}|o['’]clock\b)))"
        rf"|(?P<tuple>[(\[]\s*{_MEMBER}(?:{_TUPLE_SEPARATOR[decimal_comma]}{_MEMBER})+\s*[)\]])"
        rf"|(?P<latex>{_START}(?P<lsign>{_SIGN})?(?:(?P<lwhole>[0-9]+)\s?)?\\[dt]?frac\s*"
        rf"(?:{_BRACED % 'lnum'}\s*{_BRACED % 'lden'}|(?P<lnum1>[0-9])(?P<lden1>[0-9])))"
        rf"|(?P<mixed>{_START}(?P<msign>{_SIGN})?(?P<mwhole>[0-9]+)[ \u00a0]"
        r"(?P<mnum>[0-9]+)/(?P<mden>[0-9]+)(?![\w/]|\.[0-9]))"
        rf"|(?P<vulgar>{_START}(?P<vsign>{_SIGN})?(?P<vwhole>[0-9]+)?\s?(?P<vchar>[{_VULGAR}]))"
        rf"|(?P<fraction>{_START}(?P<fsign>{_SIGN})?(?P<fnum>[0-9]+)/(?P<fden>[0-9]+)(?![\w/]|\.[0-9]))"
        rf"|(?P<decimal>(?<![0-9{_LETTER}_.])(?P<sign>{_SIGN}|{_LOOSE_MINUS})?(?:[{_CURRENCY}]\s?)?(?P<sign2>{_SIGN})?"
        rf"(?P<run>[0-9]+(?:{_JOIN}[0-9]+)*|\.[0-9]+)"
        r"(?:[eE](?P<exponent>[-+]?[0-9]+))?(?![0-9])(?P<truncated>\.\.\.|…)?))"
    )


def number_tokens(text: str, *, decimal_comma: bool = False, limit: int | None = None) -> list[NumberToken]:
    """Every number in `text`, in order; the first `limit` of them when a limit is given."""
    tokens = (token for match in _pattern(decimal_comma).finditer(text) for token in _tokens_of(match, decimal_comma))
    return list(islice(tokens, limit))


def _tokens_of(m: re.Match[str], decimal_comma: bool) -> Iterator[NumberToken]:
    kind = m.lastgroup
    if kind == "decimal":
        yield from _decimal(m, decimal_comma)
    elif kind == "fraction":
        yield from _fraction(m)
    elif kind == "mixed":
        yield from _mixed(m, decimal_comma)
    elif kind == "latex":
        yield from _latex(m)
    elif kind == "vulgar":
        yield _vulgar(m)
    elif kind == "colon":
        yield _colon(m)
    elif kind == "tuple":
        yield from _tuple(m, decimal_comma)


def _negative(sign: str | None) -> bool:
    return sign is not None and sign.strip() in ("-", "\u2212", "\u2013")


def _signed(value: Fraction, sign: str | None) -> Fraction:
    return -value if _negative(sign) else value


def _plus_minus(token: NumberToken, *signs: str | None) -> NumberToken:
    return refused(token, f"{token.text} is two values") if "\u00b1" in signs else token


def _decimal(m: re.Match[str], decimal_comma: bool) -> Iterator[NumberToken]:
    sign, sign2, written, exponent_text, cut = m.group("sign", "sign2", "run", "exponent", "truncated")
    if len(written) <= _SHORT and not (exponent_text or cut or decimal_comma):
        common = _COMMON.fullmatch(written)  # most numbers: "19", "1,234", "3.5"
        if common is not None:
            whole, fraction = common.group("whole").replace(",", ""), common.group("fraction") or ""
            exact = _signed(_exact(whole, fraction, 0), sign or sign2)
            yield _plus_minus(NumberToken(m.start(), m.end(), m.group(), exact, len(fraction)), sign, sign2)
            return
    if _digit_count(written) > MAX_DIGITS:  # whatever the run means, no part of it is read: out of range
        yield NumberToken(m.start(), m.end(), m.group(), None)
        return
    run_start = m.start("run")
    if written.startswith("."):
        found = [Piece(0, 0, "0", written[1:])]
        run = Run([written[1:]], [1], [])
    else:
        run = Run.of(written)
        found = pieces(run, decimal_comma=decimal_comma)
    for k, piece in enumerate(found):
        first, last = k == 0, k == len(found) - 1
        start = m.start() if first else run_start + run.starts[piece.first]
        end = run_start + run.starts[piece.last] + len(run.groups[piece.last])
        exponent = bounded_int(exponent_text or "0") if last else 0
        truncated = last and bool(cut and piece.fraction)
        if last:  # the exponent and a cut-short decimal's "..." belong to the run's last number
            end = m.end() if truncated or not cut else m.start("truncated")
        value = _piece_value(piece, exponent, (sign or sign2) if first else None)
        decimals = max(0, len(piece.fraction) - (exponent or 0))
        token = NumberToken(start, end, m.string[start:end], value, decimals, truncated)
        yield _plus_minus(token, sign, sign2) if first else token


def _piece_value(piece: Piece, exponent: int | None, sign: str | None) -> Fraction | None:
    """The piece's exact value; None out of range (an exponent past ±1000, more than MAX_DIGITS digits)."""
    if exponent is None or abs(exponent) > MAX_EXPONENT or len(piece.whole) + len(piece.fraction) > MAX_DIGITS:
        return None
    return _signed(_exact(piece.whole, piece.fraction, exponent), sign)


def _digit_count(written: str) -> int:
    return len(written) - len(written.translate(_DROP_DIGITS))


def bounded_int(digits: str) -> int | None:
    """int(digits), or None past MAX_DIGITS digits: out of range ("1e" and 4,301 nines)."""
    return int(digits) if len(digits.lstrip("-+")) <= MAX_DIGITS else None


def _exact(whole: str, fraction: str, exponent: int) -> Fraction:
    digits = whole + fraction
    if exponent or len(digits) > _SHORT:
        return Fraction(Decimal(f"{whole}.{fraction or 0}")) * Fraction(10) ** exponent
    # The common case, without Decimal: int() and one power of ten are several times faster.
    return Fraction(int(digits), 10 ** len(fraction)) if fraction else Fraction(int(whole))


def _integer(text: str, start: int, end: int) -> NumberToken:
    whole = bounded_int(text[start:end])
    return NumberToken(start, end, text[start:end], None if whole is None else Fraction(whole), 0)


def _out_of_range(m: re.Match[str], *groups: str) -> NumberToken | None:
    """The whole match as a number out of range when one of its digit groups is too long to read."""
    if all(len(m.group(group) or "") <= MAX_DIGITS for group in groups):
        return None
    return NumberToken(m.start(), m.end(), m.group(), None)


def _fraction(m: re.Match[str]) -> Iterator[NumberToken]:
    if (too_long := _out_of_range(m, "fnum", "fden")) is not None:
        yield too_long
        return
    numerator, denominator = int(m.group("fnum")), int(m.group("fden"))
    if denominator == 0:  # no fraction: two numbers, as "5/0" was read before fractions were
        yield _integer(m.string, m.start("fnum"), m.end("fnum"))
        yield _integer(m.string, m.start("fden"), m.end("fden"))
        return
    value = _signed(Fraction(numerator, denominator), m.group("fsign"))
    yield _plus_minus(NumberToken(m.start(), m.end(), m.group(), value), m.group("fsign"))


def _mixed(m: re.Match[str], decimal_comma: bool) -> Iterator[NumberToken]:
    if (too_long := _out_of_range(m, "mwhole", "mnum", "mden")) is not None:
        yield too_long
        return
    whole, numerator, denominator = int(m.group("mwhole")), int(m.group("mnum")), int(m.group("mden"))
    if not 0 < numerator < denominator:  # "3 5/4" or "3 1/0": a number, then a fraction
        yield _integer(m.string, m.start("mwhole"), m.end("mwhole"))
        rest = _pattern(decimal_comma).match(m.string, m.start("mnum"))
        if rest is not None:
            yield from _tokens_of(rest, decimal_comma)
        return
    value = _signed(whole + Fraction(numerator, denominator), m.group("msign"))
    yield _plus_minus(NumberToken(m.start(), m.end(), m.group(), value), m.group("msign"))


def _latex(m: re.Match[str]) -> Iterator[NumberToken]:
    if (too_long := _out_of_range(m, "lwhole", "lnum", "lden")) is not None:
        yield too_long
        return
    numerator = Fraction(Decimal(m.group("lnum") or m.group("lnum1")))
    denominator = Fraction(Decimal(m.group("lden") or m.group("lden1")))
    if denominator == 0:
        return
    value = _signed(int(m.group("lwhole") or 0) + numerator / denominator, m.group("lsign"))
    yield _plus_minus(NumberToken(m.start(), m.end(), m.group(), value), m.group("lsign"))


def _vulgar(m: re.Match[str]) -> NumberToken:
    if (too_long := _out_of_range(m, "vwhole")) is not None:
        return too_long
    part = Fraction(unicodedata.numeric(m.group("vchar"))).limit_denominator(10)
    value = _signed(int(m.group("vwhole") or 0) + part, m.group("vsign"))
    return _plus_minus(NumberToken(m.start(), m.end(), m.group(), value), m.group("vsign"))


def _colon(m: re.Match[str]) -> NumberToken:
    what = "a clock time" if CLOCK.fullmatch(m.group()) else "a ratio"
    token = NumberToken(m.start(), m.end(), m.group(), None)
    return refused(token, f"{m.group()} is {what}, not one number")


def _tuple(m: re.Match[str], decimal_comma: bool) -> Iterator[NumberToken]:
    inner_start = m.start() + 1
    inner = number_tokens(m.string[inner_start : m.end() - 1], decimal_comma=decimal_comma, limit=2)
    if len(inner) == 1:  # "(1,000)": one number in brackets
        yield replace(inner[0], start=inner[0].start + inner_start, end=inner[0].end + inner_start)
        return
    yield refused(NumberToken(m.start(), m.end(), m.group(), None), f"{m.group()} is a tuple, not one number")
