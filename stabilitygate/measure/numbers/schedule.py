"""A schedule worked out from a stated duration: "Baking takes 45 minutes, so it is ready at 3:15".

When a text states a duration (a number and a unit of time) before any time of day, the times of
day after it ("at 3:15", "3 pm", "at 9,", "noon") are the duration put on a clock, not the answer:
from the clause of the first of them to the end of the sentence of the last, the numbers are
passed over. A time of day before the duration ("leaves at 9:10 and the ride takes 50 minutes, so
it arrives at 10:00") makes the clock the subject: nothing is passed over (docs/design.md §4.1).
"""

from __future__ import annotations

import re

from stabilitygate.measure.numbers.tokens import CLOCK, NumberToken

_DURATION_AFTER = re.compile(
    r"[ \t]*-?[ \t]*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?)\b", re.I
)
#: "at 9," "by 10 and": an hour after "at", "by", "until", ending its clause.
_AT_BEFORE = re.compile(r"\b(?:at|by|until|till)\s+(?:around\s+|about\s+)?\Z", re.I)
_AT_AFTER = re.compile(r"[ \t]*(?:[,;.!?)\n]|\Z|(?:and|or|so|then|sharp)\b)", re.I)
_CLOCK_WORD = re.compile(r"\b(?:noon|midday|midnight)\b", re.I)
_CLAUSE_BREAK = re.compile(r"[,;:.!?\n]")
_SENTENCE_END = re.compile(r"[.!?](?=\s|\Z)|\n")
_MAX_HOUR = 24


def schedule_spans(text: str, tokens: list[NumberToken]) -> list[tuple[int, int]]:
    """The stretch of a schedule after a stated duration, or nothing."""
    duration = next((token for token in tokens if _is_duration(text, token)), None)
    if duration is None:
        return []
    times = _times_of_day(text, tokens)
    if any(start < duration.start for start in times):
        return []
    after = [start for start in times if start >= duration.end]
    if not after:
        return []
    start = max(_clause_start(text, after[0]), duration.end)
    end = _SENTENCE_END.search(text, after[-1])
    return [(start, end.end() if end else len(text))]


def _is_duration(text: str, token: NumberToken) -> bool:
    return token.value is not None and not token.not_one and _DURATION_AFTER.match(text, token.end) is not None


def _times_of_day(text: str, tokens: list[NumberToken]) -> list[int]:
    """Where the times of day start, in order: clock times, "at 9,", "noon"."""
    found = [token.start for token in tokens if _is_time_of_day(text, token)]
    if _CLOCK_WORD.search(text):
        found += [m.start() for m in _CLOCK_WORD.finditer(text)]
    return sorted(found)


def _is_time_of_day(text: str, token: NumberToken) -> bool:
    if CLOCK.fullmatch(token.text):
        return True
    if not token.plain_integer or int(token.text) > _MAX_HOUR:
        return False
    at = _AT_BEFORE.search(text, max(0, token.start - 16), token.start)
    return at is not None and _AT_AFTER.match(text, token.end) is not None


def _clause_start(text: str, pos: int) -> int:
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, max(0, pos - 200), pos)]
    return breaks[-1] if breaks else max(0, pos - 200)
