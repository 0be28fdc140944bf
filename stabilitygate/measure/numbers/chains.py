"""Chains: numbers joined by operators, `=` and `≈` ("4 + 6 = 10", "2/3 ≈ 0.67"), and what they come to.

A chain's result is what its last `=` gives, read before any `≈` (the exact form, not its
rounding): "4 + 6 = 10" is 10, "1/3 + 1/3 = 2/3 ≈ 0.67" is 2/3, "2/3 = 0.666..." is 2/3. An
expression with no `=` after it is worked out exactly ("4 + 6" is 10) when an answer phrase
introduces it. An unspaced dash ("12-7") is a range as much as a difference: never worked out,
and no answer where it is the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.links import Link, LinkKind
from stabilitygate.measure.numbers.tokens import NumberToken

_JOINING = frozenset({LinkKind.OPERATOR, LinkKind.DASH, LinkKind.EQUALS, LinkKind.APPROX})
_MAX_BITS = 100_000  # an exact value past this many bits is no answer anyone wrote


@dataclass(frozen=True)
class Chain:
    """tokens[first..last] (inclusive), joined by links."""

    first: int
    last: int


@dataclass(frozen=True)
class Numbers:
    """A text's numbers and the links between neighbours: what every rule reads."""

    text: str
    tokens: list[NumberToken]
    links: list[Link]  # links[i] joins tokens[i - 1] and tokens[i]

    @cached_property
    def chains(self) -> list[Chain]:
        """The chains in text order; every number is in exactly one."""
        found: list[Chain] = []
        for i in range(len(self.tokens)):
            if found and self.links[i].kind in _JOINING:
                found[-1] = Chain(found[-1].first, i)
            else:
                found.append(Chain(i, i))
        return found

    def has(self, chain: Chain, kind: LinkKind) -> bool:
        return any(self.links[i].kind is kind for i in range(chain.first + 1, chain.last + 1))

    def repeats(self) -> list[bool]:
        """For each number, whether it repeats a value written earlier in the text."""
        seen: set[tuple[int, int] | None] = set()
        flags = []
        for token in self.tokens:
            key = (token.value.numerator, token.value.denominator) if token.value is not None else None
            flags.append(key in seen)  # a tuple hashes far faster than a Fraction
            seen.add(key)
        return flags


def result(numbers: Numbers, chain: Chain) -> Fraction:
    """What the chain comes to: the last `=` segment before any `≈`, worked out exactly."""
    stop = chain.last
    for i in range(chain.first + 1, chain.last + 1):
        link = numbers.links[i].kind
        if link is LinkKind.APPROX or (link is LinkKind.EQUALS and numbers.tokens[i].truncated):
            stop = i - 1
            break
    start = chain.first
    for i in range(chain.first + 1, stop + 1):
        if numbers.links[i].kind is LinkKind.EQUALS:
            start = i
    return _evaluate(numbers, start, stop)


def last_value(numbers: Numbers, chain: Chain) -> Fraction:
    """The chain read as the last number of a text: its result after `=` or beside `≈`, else its last number."""
    if numbers.has(chain, LinkKind.EQUALS) or numbers.has(chain, LinkKind.APPROX) or numbers.has(chain, LinkKind.DASH):
        return result(numbers, chain)
    return _value(numbers.tokens[chain.last])


def chain_at(numbers: Numbers, index: int) -> Chain:
    """The chain that holds tokens[index]."""
    return next(chain for chain in numbers.chains if chain.first <= index <= chain.last)


def _value(token: NumberToken) -> Fraction:
    if token.not_one:
        raise NoAnswer(token.not_one)
    if token.value is None:
        raise NoAnswer("the number is out of range")
    return token.value


def _evaluate(numbers: Numbers, start: int, stop: int) -> Fraction:
    """tokens[start..stop] with their operators, × and ÷ before + and −."""
    links = numbers.links[start + 1 : stop + 1]
    if any(link.kind is LinkKind.DASH for link in links):
        written = numbers.text[numbers.tokens[start].start : numbers.tokens[stop].end]
        raise NoAnswer(f"{written} is a range or a difference, not one number")
    total, term = Fraction(0), _value(numbers.tokens[start])
    for link, token in zip(links, numbers.tokens[start + 1 : stop + 1], strict=True):
        value = _value(token)
        if link.operator in "+-":
            total += term
            term = value if link.operator == "+" else -value
        elif link.operator == "*":
            term *= value
        elif value == 0:
            raise NoAnswer("the answer divides by zero")
        else:
            term /= value
        if max(term.numerator.bit_length(), term.denominator.bit_length()) > _MAX_BITS:
            raise NoAnswer("the number is out of range")
    return total + term
