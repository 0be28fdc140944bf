"""Numbers written in words, wherever they stand ("twenty-one marbles", "a dozen", "half of it", "none left").

Cardinals up to the trillions ("one hundred and five", "two million"), "dozen", decimals read out
("seven point five"), fractions ("half of", "a third", "two thirds", "three quarters", "two and a
half"), "none" and "zero", and an ordinal that ranks ("finishes fourth", "in third place"). Not read:
"one" as a pronoun ("the one that", "one of them", "no one"), "a" before anything but a number word,
"half" that names a part ("the second half"), and ordinals that name ("the fourth day").
"""

from __future__ import annotations

import re
from fractions import Fraction

from stabilitygate.measure.numbers.tokens import NumberToken
from stabilitygate.trie_pattern import trie_pattern

_UNIT_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen"
)
_UNITS = {word: n for n, word in enumerate(_UNIT_WORDS.split())}
_TEN_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {word: 10 * n for n, word in enumerate(_TEN_WORDS.split(), 2)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINAL_WORDS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
_ORDINALS = {word: n for n, word in enumerate(_ORDINAL_WORDS.split(), 1)}
#: Denominators: "a third", "two fifths", "three quarters" ("half" is read on its own).
_PARTS = {
    **{word: n for word, n in _ORDINALS.items() if n >= 3},
    **{word + "s": n for word, n in _ORDINALS.items() if n >= 3},
    "quarter": 4,
    "quarters": 4,
    "halves": 2,
}
#: "the one that", "one of them", "one by one", "no one": the pronoun, not the number.
_PRONOUN_FOLLOWERS = "of that which who where such another by day way thing else other"
_PRONOUN_AFTER = frozenset(_PRONOUN_FOLLOWERS.split())
_PRONOUN_BEFORE = re.compile(r"\b(?:the|this|that|each|every|no|any|some|which|another|last|next)\s+$", re.I)
_HALF_USE = re.compile(r"\s+(?:of|a|an|the|as)\b", re.I)  # "half of the pizza", "half a litre"
_NONE_OF_OPTIONS = re.compile(r"\s+of\s+(?:the\s+)?(?:above|options|choices|answers|these|those)\b", re.I)
_RANKS = re.compile(
    r"\b(?:finish(?:es|ed)?|came|comes?|placed?|places|ranked|ranks?|ends?\s+up|ended\s+up)\s+(?:in\s+)?$", re.I
)
_GOES_ON_WORDS = "hundredth hundredths thousandth thousandths millionth millionths"
_GOES_ON = frozenset(_GOES_ON_WORDS.split())
_PLACE_AFTER = re.compile(r"\s+(?:place|position)\b", re.I)
_A_BEFORE = "|".join(["dozen", "half", "hundred", "thousand", "million", "billion", *_PARTS])


_START = re.compile(
    rf"\b(?:{trie_pattern([*_UNITS, *_TENS, *_ORDINALS, 'half', 'none'])}|an?(?=[ \t]+(?:{_A_BEFORE})\b))\b", re.I
)
_WORD = re.compile(r"[a-z]+", re.I)
_JOIN = re.compile(r"[ \t-]+|\s*,\s*(?=and\b)")  # between the words of one number
_MAX_WORDS = 16

Parsed = tuple[Fraction, int] | None  # (value, index of the first word not used)


def word_tokens(text: str, limit: int | None = None) -> list[NumberToken]:
    """Every number written in words in `text`, in order; the first `limit` of them when a limit is given."""
    found: list[NumberToken] = []
    for m in _START.finditer(text):
        if len(found) == limit:
            break
        if found and m.start() < found[-1].end:
            continue
        read = read_number_words(text, m.start())
        if read is not None:
            value, end = read
            found.append(NumberToken(m.start(), end, text[m.start() : end], value, None))
    return found


def read_number_words(text: str, pos: int) -> tuple[Fraction, int] | None:
    """The number written in words at `pos`, with the offset where it ends; None if there is none."""
    words = Words(text, pos)
    first = words[0]
    if not first:
        return None
    if first in _ORDINALS:
        return _ranking(text, pos, words.end(0), first)
    if first == "none":
        return None if _NONE_OF_OPTIONS.match(text, words.end(0)) else (Fraction(0), words.end(0))
    if first == "half":
        return _half(text, words)
    parsed = _number(words, 0)
    if parsed is None:
        return None
    value, used = parsed
    if used == 1 and first == "one" and _is_pronoun(text, pos, words):
        return None
    return value, words.end(used - 1)


def _ranking(text: str, pos: int, end: int, word: str) -> tuple[Fraction, int] | None:
    return (Fraction(_ORDINALS[word]), end) if ranks(text, pos, end) else None


def ranks(text: str, start: int, end: int) -> bool:
    """Whether the ordinal at text[start:end] ranks: "finishes fourth", "came in 3rd", "in second place"."""
    return _RANKS.search(text, max(0, start - 24), start) is not None or _PLACE_AFTER.match(text, end) is not None


def _half(text: str, words: Words) -> tuple[Fraction, int] | None:
    if _HALF_USE.match(text, words.end(0)) is None:
        return None
    if words[1] in ("a", "an") and words[2] in _SCALES:  # "half a million"
        return Fraction(_SCALES[words[2]], 2), words.end(2)
    return Fraction(1, 2), words.end(0)


def _is_pronoun(text: str, pos: int, words: Words) -> bool:
    return words[1] in _PRONOUN_AFTER or _PRONOUN_BEFORE.search(text, max(0, pos - 12), pos) is not None


class Words:
    """The words from `pos` on, lowercased, read only as far as the grammar asks (`""` past the last)."""

    def __init__(self, text: str, pos: int) -> None:
        self._text, self._next = text, pos
        self._words: list[str] = []
        self._ends: list[int] = []

    def __getitem__(self, i: int) -> str:
        while len(self._words) <= i and self._next >= 0 and len(self._words) < _MAX_WORDS:
            self._read_one()
        return self._words[i] if i < len(self._words) else ""

    def end(self, i: int) -> int:
        return self._ends[i]

    def _read_one(self) -> None:
        m = _WORD.match(self._text, self._next)
        if m is None:
            self._next = -1
            return
        self._words.append(m.group().lower())
        self._ends.append(m.end())
        join = _JOIN.match(self._text, m.end())
        self._next = join.end() if join is not None else -1


def _number(words: Words, i: int) -> Parsed:
    """A cardinal, then what may follow it: "dozen", a fraction, "and a half", "point five"."""
    first, second = words[i], words[i + 1]
    if first in ("a", "an"):
        if second == "dozen":
            return Fraction(12), i + 2
        if second in _PARTS or second == "half":
            return Fraction(1, _PARTS.get(second, 2)), i + 2
    head = _cardinal(words, i)
    if head is None:
        return None
    value, j = head
    word = words[j]
    if word == "dozen":
        return value * 12, j + 1
    if word in _PARTS and j == i + 1:  # "two thirds", "one fourth"
        return value / _PARTS[word], j + 1
    if word == "half" and first == "one" and j == i + 1:
        return Fraction(1, 2), j + 1
    if word in _GOES_ON:
        return None  # "twenty-five hundredths": read nothing rather than 25
    return _tail(words, value, j)


def _tail(words: Words, value: Fraction, j: int) -> Parsed:
    """ "and a half", "and three quarters", "point five": the part after a whole number."""
    if words[j] == "and" and words[j + 1] in ("a", "an", "one") and words[j + 2] == "half":
        return value + Fraction(1, 2), j + 3
    if words[j] == "and" and words[j + 2] in _PARTS:
        part = _below_hundred(words, j + 1)
        if part is not None and part[1] == j + 2:
            return value + part[0] / _PARTS[words[j + 2]], j + 3
    if words[j] == "point":
        digits = ""
        k = j + 1
        while words[k] in _UNITS and _UNITS[words[k]] < 10:
            digits += str(_UNITS[words[k]])
            k += 1
        if not digits:
            return None  # "seven point" and nothing: no number rather than 7
        return value + Fraction(int(digits), 10 ** len(digits)), k
    return value, j


def _cardinal(words: Words, i: int) -> Parsed:
    """Parts below a thousand times falling scales: "two million three hundred thousand and five"."""
    total, j, smallest = Fraction(0), i, 0
    while (part := _below_thousand(words, j)) is not None:
        count, k = part
        scale = _SCALES.get(words[k], 0)
        if not scale or (smallest and scale >= smallest):
            return total + count, k
        total, j, smallest = total + count * scale, k + 1, scale
        rest = _below_thousand(words, j + 1) if words[j] == "and" else None
        if rest is not None and rest[0] and not _SCALES.get(words[rest[1]], 0):  # "a thousand and five"
            return total + rest[0], rest[1]
    return (total, j) if smallest else None


def _below_thousand(words: Words, i: int) -> Parsed:
    count = 1 if words[i] in ("a", "an") else _UNITS.get(words[i], 0)
    if 1 <= count <= 9 and words[i + 1] == "hundred":
        value, j = Fraction(count * 100), i + 2
        start = j + 1 if words[j] == "and" else j
        rest = _below_hundred(words, start)
        return (value + rest[0], rest[1]) if rest and rest[0] else (value, j)
    if words[i] in ("a", "an") and words[i + 1] in _SCALES:
        return Fraction(1), i + 1
    return _below_hundred(words, i)


def _below_hundred(words: Words, i: int) -> Parsed:
    word = words[i]
    if word in _UNITS:
        return Fraction(_UNITS[word]), i + 1
    if word not in _TENS:
        return None
    unit = _UNITS.get(words[i + 1], 0)
    return (Fraction(_TENS[word] + unit), i + 2) if 1 <= unit <= 9 else (Fraction(_TENS[word]), i + 1)
