"""What a run of digit groups means: grouping, the decimal mark, or several numbers (docs/design.md §4.1).

The lexer hands over a run such as `1,234.50`, `1.234,50`, `12 345,67`, `1,00,000` or `1,2,3`: digit
groups joined by single separators. A separator is a thousands separator only where the groups
around it have the shape of thousands (a first group of one to three digits, not starting with 0,
then groups of exactly three; Indian grouping: pairs, then a last three); a comma that cannot
separate thousands is a decimal comma (`17,5`, `0,125`); a run of commas that is neither is a list
(`1,2,3`); dotted runs that are not thousands are versions and dates (`3.11.2`, `01.02.2024`) and
give no number. With `decimal_comma` the comma is always the decimal mark and the dot separates
thousands where it can (`1.234` is 1234, `1.5` is still 1.5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

_GROUP = re.compile(r"[0-9]+")
_SPACED = frozenset(" \u00a0\u2009\u202f\\")  # spaces and LaTeX's \, \! \  (a thin space)


@dataclass(frozen=True, slots=True)
class Piece:
    """One number of a run: groups first..last (inclusive), its integer digits and its decimals."""

    first: int
    last: int
    whole: str
    fraction: str = ""


@dataclass(frozen=True, slots=True)
class Run:
    """A run split into its groups (with their offsets in the run) and the separators between them."""

    groups: list[str]
    starts: list[int]
    separators: list[str]  # "," "." or " " (every kind of space), len(groups) - 1 of them

    @classmethod
    def of(cls, text: str) -> Run:
        matches = list(_GROUP.finditer(text))
        groups = [m.group() for m in matches]
        separators = [_kind(text[a.end() : b.start()]) for a, b in pairwise(matches)]
        return cls(groups, [m.start() for m in matches], separators)


def _kind(separator: str) -> str:
    if separator == ".":
        return "."
    return " " if separator[0] in _SPACED else ","


def pieces(run: Run, *, decimal_comma: bool) -> list[Piece]:
    """The numbers the run writes, in order; a version or date gives none."""
    found: list[Piece] = []
    i = 0
    while i < len(run.groups):
        head_end = _spaced_head(run, i)
        rest_end = _segment_end(run, head_end)
        found += _segment(run, i, head_end, rest_end, decimal_comma)
        i = rest_end + 1
    return found


def _spaced_head(run: Run, first: int) -> int:
    """The last group joined to `first` by spaces as thousands ("2 500 000"); `first` when none is."""
    last = first
    if len(run.groups[first]) > 3 or run.groups[first].startswith("0"):
        return last
    while last < len(run.separators) and run.separators[last] == " " and len(run.groups[last + 1]) == 3:
        last += 1
    return last


def _segment_end(run: Run, head_end: int) -> int:
    """Where the commas and dots after the head stop: at the next space, or the run's end."""
    end = head_end
    while end < len(run.separators) and run.separators[end] != " ":
        end += 1
    return end


def _segment(run: Run, first: int, head_end: int, last: int, decimal_comma: bool) -> list[Piece]:
    groups = run.groups
    whole = "".join(groups[first : head_end + 1])
    marks = run.separators[head_end:last]
    if not marks:
        return [Piece(first, last, whole)]
    if head_end > first:  # spaced thousands: what follows can only be the decimals
        if len(marks) == 1:
            return [Piece(first, last, whole, groups[last])]
        return [Piece(first, head_end, whole), *_segment(run, head_end + 1, head_end + 1, last, decimal_comma)]
    return _marked(groups[first : last + 1], marks, first, decimal_comma)


def _marked(groups: list[str], marks: list[str], offset: int, decimal_comma: bool) -> list[Piece]:
    """Groups joined by commas and dots only."""
    point, grouping = (",", ".") if decimal_comma else (".", ",")
    last = offset + len(groups) - 1
    if len(marks) == 1:  # "1,234" or "1.234": thousands if it can be, else the decimal mark
        if marks[0] == grouping and _thousands(groups):
            return [Piece(offset, last, "".join(groups))]
        return [Piece(offset, last, groups[0], groups[1])]
    if all(mark == marks[0] for mark in marks):
        if _thousands(groups) and (marks[0] == grouping or marks[0] == "."):
            return [Piece(offset, last, "".join(groups))]  # 1,234,567 or 2.500.000
        if marks[0] == "," and _indian(groups):
            return [Piece(offset, last, "".join(groups))]
        if marks[0] == ",":
            return [Piece(offset + k, offset + k, group) for k, group in enumerate(groups)]  # a list: 1,2,3
        return []  # a dotted run: a version or a date
    head, tail = groups[:-1], groups[-1]
    head_marks, tail_mark = marks[:-1], marks[-1]
    if tail_mark != head_marks[0] and all(mark == head_marks[0] for mark in head_marks):
        separated = _thousands(head) or (head_marks[0] == "," and _indian(head))
        if separated and (tail_mark == point or (tail_mark == "," and not decimal_comma)):
            return [Piece(offset, last, "".join(head), tail)]  # 1,234.50; 1.234,50; 12,34,567.89
    return []  # marks that fit no notation: read nothing rather than guess


def _thousands(groups: list[str]) -> bool:
    head = groups[0]
    return len(groups) > 1 and len(head) <= 3 and not head.startswith("0") and all(len(g) == 3 for g in groups[1:])


def _indian(groups: list[str]) -> bool:
    head, middle, tail = groups[0], groups[1:-1], groups[-1]
    return (
        len(groups) > 2
        and len(head) <= 2
        and not head.startswith("0")
        and all(len(g) == 2 for g in middle)
        and len(tail) == 3
    )
