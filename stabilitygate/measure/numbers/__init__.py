"""The number reader behind `number: true` (docs/design.md §4.1): lexing, words, chains, context, the rules."""

from stabilitygate.measure.numbers.reader import read_number

__all__ = ["read_number"]
