"""Code in an answer: its numbers are the program's, not the answer; its output is the answer.

Fenced blocks and inline code that hold code are passed over; a fenced block (or a line after one)
holding one number, a REPL's output line, and "Output: N", "Result: N", "prints N" where the text
has code are outputs (docs/design.md §4.1).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from stabilitygate.measure.numbers.spans import Spans

_FENCE = re.compile(r"```[^\n`]*\n(?P<body>.*?)(?:```|\Z)", re.S)
_INLINE = re.compile(r"`(?P<body>[^`\n]+)`")
_LONE_NUMBER = re.compile(r"\s*+[-+\u2212]?[$\u20ac\u00a3]?[0-9][0-9,. ]*+(?:e[-+]?[0-9]+)?\s*+", re.I)
_AFTER_FENCE = re.compile(r"```[ \t]*\n+(?P<line>[^\n`]+)(?:\n|$)")
_OUTPUT_PHRASE = re.compile(
    r"(?:(?:^|\n)[ \t>*_-]*+(?:output|result|out(?:\[[0-9]+\])?|returns?|prints?)[ \t]*:[ \t]*\n?[ \t`*]*"
    r"|\b(?:prints|printed|outputs|output\s+is|returns|evaluates\s+to)[ \t]+[`*]*)",
    re.I,
)
_REPL_PROMPT = re.compile(r"[ \t]*(?:>>>|\.\.\.|\$|>)[ \t]")


@dataclass(frozen=True)
class Code:
    """Where the text's code is (passed over) and where its outputs begin."""

    spans: list[tuple[int, int]]
    outputs: list[int]


def code_in(text: str) -> Code:
    if "`" not in text and ">>>" not in text:
        return Code([], [])
    spans: list[tuple[int, int]] = []
    outputs: list[int] = []
    for m in _FENCE.finditer(text):
        body_start = m.start("body")
        if _LONE_NUMBER.fullmatch(m.group("body")):
            outputs.append(body_start + _first_digit(m.group("body")))
            continue
        spans.append((m.start(), m.end()))
        outputs += [body_start + offset for offset in _repl_outputs(m.group("body"))]
    fenced = Spans(spans)
    for m in _INLINE.finditer(text):
        if m.start() not in fenced and not _LONE_NUMBER.fullmatch(m.group("body")):
            spans.append((m.start(), m.end()))
    for m in _AFTER_FENCE.finditer(text):
        if _LONE_NUMBER.fullmatch(m.group("line")):
            outputs.append(m.start("line") + _first_digit(m.group("line")))
    code = Spans(spans)
    outputs += [m.end() for m in _OUTPUT_PHRASE.finditer(text) if m.start() not in code]
    return Code(sorted(spans), sorted(set(outputs)))


def _repl_outputs(body: str) -> list[int]:
    """Offsets (in `body`) of the lines a REPL printed after a prompt line, when they hold one number."""
    found, offset, prompted = [], 0, False
    for line in body.splitlines(keepends=True):
        if _REPL_PROMPT.match(line):
            prompted = True
        elif prompted and _LONE_NUMBER.fullmatch(line):
            found.append(offset + _first_digit(line))
        offset += len(line)
    return found


def _first_digit(text: str) -> int:
    return next(i for i, char in enumerate(text) if not char.isspace())
