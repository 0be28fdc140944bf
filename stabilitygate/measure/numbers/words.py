"""Number words from zero to a million ("seven", "twenty-one", "one hundred and five", "a million").

Read only right after an answer phrase ("The answer is seven."): elsewhere "one" and "a" are too
often not numbers. A number that goes past a million, or on into a fraction or a decimal ("two
million", "seven point five", "three quarters"), is not read at all rather than read short.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_UNIT_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen"
)
_UNITS = {word: n for n, word in enumerate(_UNIT_WORDS.split())}
_TEN_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {word: 10 * n for n, word in enumerate(_TEN_WORDS.split(), 2)}
#: Words that carry a number on past what is read here: reading it short would be a wrong value.
_GOES_ON_WORDS = (
    "hundred thousand million billion trillion point half halves third thirds quarter quarters"
    " fifth fifths sixth sixths eighth eighths tenth tenths"
)
_GOES_ON = frozenset(_GOES_ON_WORDS.split())
#: "The answer is one of them", "one that ...": the pronoun, not the number.
_PRONOUN_ONE = frozenset({"of", "that", "which", "who", "where", "such"})
_WORD = re.compile(r"[a-z]+", re.I)
_JOIN = re.compile(r"[ \t-]+|\s*,\s*(?=and\b)")  # between the words of one number
_MAX_WORDS = 12

Words = list[str]
Parsed = tuple[int, int] | None  # (value, index of the first word not used)


def read_number_words(text: str, pos: int) -> tuple[int, int] | None:
    """The number written in words at `pos`, with the offset where it ends; None if there is none."""
    words, ends = _words_at(text, pos)
    parsed = _number(words, 0)
    if parsed is None:
        return None
    value, used = parsed
    following = words[used] if used < len(words) else ""
    if following in _GOES_ON or (words[:used] == ["one"] and following in _PRONOUN_ONE):
        return None
    return value, ends[used - 1]


def _words_at(text: str, pos: int) -> tuple[Words, list[int]]:
    words: Words = []
    ends: list[int] = []
    while len(words) < _MAX_WORDS:
        m = _WORD.match(text, pos)
        if m is None:
            break
        words.append(m.group().lower())
        ends.append(m.end())
        join = _JOIN.match(text, m.end())
        if join is None:
            break
        pos = join.end()
    return words, ends


def _at(words: Words, i: int) -> str:
    return words[i] if i < len(words) else ""


def _number(words: Words, i: int) -> Parsed:
    if _at(words, i) in ("a", "one") and _at(words, i + 1) == "million":
        return 1_000_000, i + 2
    return _below_million(words, i)


def _below_million(words: Words, i: int) -> Parsed:
    if _at(words, i) == "a" and _at(words, i + 1) == "thousand":
        head: Parsed = (1, i + 1)
    else:
        head = _below_thousand(words, i)
    if head is None or _at(words, head[1]) != "thousand":
        return head
    value, j = head[0] * 1000, head[1] + 1
    rest = _and_then(words, j, _below_thousand)
    return (value + rest[0], rest[1]) if rest else (value, j)


def _below_thousand(words: Words, i: int) -> Parsed:
    count = 1 if _at(words, i) == "a" else _UNITS.get(_at(words, i), 0)
    if 1 <= count <= 9 and _at(words, i + 1) == "hundred":
        value, j = count * 100, i + 2
        rest = _and_then(words, j, _below_hundred)
        return (value + rest[0], rest[1]) if rest else (value, j)
    return _below_hundred(words, i)


def _below_hundred(words: Words, i: int) -> Parsed:
    word = _at(words, i)
    if word in _UNITS:
        return _UNITS[word], i + 1
    if word not in _TENS:
        return None
    unit = _UNITS.get(_at(words, i + 1), 0)
    return (_TENS[word] + unit, i + 2) if 1 <= unit <= 9 else (_TENS[word], i + 1)


def _and_then(words: Words, i: int, part: Callable[[Words, int], Parsed]) -> Parsed:
    """The part after a scale word, with or without "and" ("one hundred and five")."""
    start = i + 1 if _at(words, i) == "and" else i
    parsed: Parsed = part(words, start)
    if parsed is None or parsed[0] == 0:  # "a hundred and zero" is no number people write
        return None
    return parsed
