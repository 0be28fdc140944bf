"""An explicit answer: "#### 19", "the answer is 19", "Answer: 19", "final answer = 19", "\\boxed{19}".

Markup ("Answer: **$19**") and one hedge word ("approximately") may stand between the phrase and
the number, and a label between "answer" and its verb ("the answer to question 3 is 17"). What the
phrase introduces is read as a whole: an equation chain gives its result ("The answer is 4 + 6 =
10."), an expression its value, a number in words its value ("The answer is seven."). Where it
introduces what is not one number (`\\boxed{4\\sqrt{2}}`, "the answer is x + 3", a tuple, a range),
the answer is refused with the reason.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction

from stabilitygate.measure.canonical import NoAnswer
from stabilitygate.measure.numbers.alternatives import committed
from stabilitygate.measure.numbers.chains import Chain, Numbers, chain_at, result

# Possessive quantifiers: whitespace and markup are never given back, so a long run of spaces
# after "answer is" costs linear time, not quadratic.
_ANSWER_LEAD = (
    r"(?:####|\\boxed\{"
    r"|\banswer\b(?:\s*\([^()\n]{1,20}\)|\s+(?:to|for|of)\s+[^.!?\n:=]{1,40}?(?=\s+(?:is|was)\b))?\s*+"
    r"(?:(?P<verb>is|was|would\s+be|will\s+be|should\s+be|must\s+be|could\s+be|might\s+be)\b\s*+:?|[:=]))"
)
_HEDGE = r"(?:(?:approximately|about|around|roughly|exactly|simply|just)\s++)?"
_MARKUP = r"(?:(?:[*_\"'`(\[{$]|\\\$|\\boxed\{|\\\(|\\\[|\\text\{)\s*+)*+"
ANSWER_LEAD = re.compile(_ANSWER_LEAD, re.I)
_LEAD_RE = re.compile(_ANSWER_LEAD + r"\s*+" + _HEDGE + _MARKUP, re.I)
_BEFORE_DIGITS = frozenset("$\u20ac\u00a3\u00a5\u20b9-+\u2212\u00b1 ([")  # what a number may start with
_UNKNOWN_IS = re.compile(r"[a-zA-Z](?:_\{?\w+\}?)?\s*=\s*[$*]*")  # "the answer is x = 5"
_MATH = re.compile(
    r"\\sqrt|√|\\frac\s*\{\s*\\|\\pi\b|π|\\pm|±|\\infty|∞|[a-zA-Z](?![a-zA-Z])\s*(?:[-+*/^=]|\\cdot|\\times)"
)
# What may stand beside the number inside \boxed{}: units, markup, spacing, operators.
_BOX_DECORATION = re.compile(
    r"\\(?:text|mathrm|textbf|mbox|operatorname)\s*\{[^{}]*\}|\\[,!;: ]|\\q?quad|\\%|\\\$|\\(?:left|right)"
    r"|\\(?:times|cdot|div|approx|dfrac|tfrac|frac)|\^\s*\{?\s*\\circ\s*\}?|\\circ|°|[A-Za-z]{2,}"
    r"|[=+\-*/×÷·≈~()\[\]{}.,:;%$\s]|[a-zA-Z](?:_\{?\w+\}?)?\s*=|\\(?=\s)",
)
_VARIABLES = frozenset("abcknpqrtxyz")


@dataclass(frozen=True)
class Explicit:
    """The answer a phrase introduces, or why it is none (a hedge, an expression)."""

    value: Fraction | None
    reason: str | None = None
    start: int = 0  # where the phrase begins
    hypothetical: bool = False  # "the answer would be 36"
    chain: Chain | None = None  # the chain read, when there is a value


def explicit_answer(numbers: Numbers) -> Explicit | None:
    """The last explicit answer in the text; None when no answer phrase introduces a number."""
    starts = [token.start for token in numbers.tokens]
    last: tuple[re.Match[str], int] | None = None
    for lead in _LEAD_RE.finditer(numbers.text):
        pos = _introduced(numbers, starts, lead.end())
        if pos is not None:
            last = (lead, pos)
    if last is None:
        return None
    lead, pos = last
    verb = (lead.group("verb") or "").lower()
    hypothetical = verb.startswith(("would", "could", "might"))
    try:
        chain = _read_at(numbers, starts, lead, pos)
        value = result(numbers, chain)
    except NoAnswer as refused:
        return Explicit(None, str(refused), lead.start(), hypothetical)
    return Explicit(value, None, lead.start(), hypothetical, chain)


def _introduced(numbers: Numbers, starts: list[int], pos: int) -> int | None:
    """Where what the phrase introduces begins, if it is a number or math; None for words."""
    if _token_at(numbers, starts, pos) is not None:
        return pos
    unknown = _UNKNOWN_IS.match(numbers.text, pos)
    if unknown is not None and _token_at(numbers, starts, unknown.end()) is not None:
        return unknown.end()
    return pos if _MATH.match(numbers.text, pos) else None


def _read_at(numbers: Numbers, starts: list[int], lead: re.Match[str], pos: int) -> Chain:
    """The chain the phrase introduces (or the statement it restates)."""
    i = _token_at(numbers, starts, pos)
    if lead.group().startswith("\\boxed"):
        _check_box(numbers, lead.start() + len("\\boxed{"), i)
    if i is None:
        raise NoAnswer(f"not one number: {' '.join(numbers.text[pos : pos + 30].split())}")
    return committed(numbers, _chain_from(numbers, i))


def _chain_from(numbers: Numbers, i: int) -> Chain:
    """tokens[i] and what its chain joins to it after it."""
    return Chain(i, chain_at(numbers, i).last)


def _check_box(numbers: Numbers, content_start: int, first: int | None) -> None:
    """Refuse a \\boxed{} that holds more than one number's worth: variables, roots, π, a tuple."""
    text = numbers.text
    content_end = _closing_brace(text, content_start)
    content = text[content_start:content_end]
    inside = [k for k, t in enumerate(numbers.tokens) if content_start <= t.start < content_end]
    if inside and first is not None:
        chain = _chain_from(numbers, first)
        if inside[-1] > chain.last:
            raise NoAnswer(f"not one number: \\boxed{{{content}}}")
    blanked = list(content)
    for k in inside:
        token = numbers.tokens[k]
        for j in range(token.start - content_start, min(token.end, content_end) - content_start):
            blanked[j] = " "
    rest = _BOX_DECORATION.sub(" ", "".join(blanked))
    if rest.strip() and any(c in _VARIABLES or not c.isalpha() for c in rest if not c.isspace()):
        raise NoAnswer(f"not one number: \\boxed{{{content}}}")


def _closing_brace(text: str, start: int) -> int:
    depth = 1
    for k in range(start, min(len(text), start + 500)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return min(len(text), start + 500)


def _token_at(numbers: Numbers, starts: list[int], pos: int) -> int | None:
    """The number that starts at `pos`, or just before it with a sign or currency the markup took."""
    i = bisect_right(starts, pos) - 1
    if i < 0:
        return None
    token = numbers.tokens[i]
    inside = token.start <= pos < token.end
    return i if inside and all(c in _BEFORE_DIGITS for c in numbers.text[token.start : pos]) else None
