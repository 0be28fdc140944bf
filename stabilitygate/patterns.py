"""The suite's regular expressions (`answer: {regex: ...}`, `expected: {regex: ...}`), compiled one
way and run under a time limit (docs/design.md §15).

A pattern with nested quantifiers (`^(a|aa)+$`) can take time exponential in the text's length on a
text it does not match; the suite's author did not mean that, and a completion of 8 MiB must not hold
the gate for hours. The `regex` module (Python's `re` syntax, plus a timeout) runs each search for at
most `TIME_LIMIT_S`: a linear pattern takes milliseconds on the largest completion, so only a pattern
that backtracks without end reaches the limit, and that is exit 2 naming the pattern.
"""

from __future__ import annotations

import functools

import regex

from stabilitygate.errors import BadInput

TIME_LIMIT_S = 2.0
Pattern = regex.Pattern[str]
Match = regex.Match[str]


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> Pattern:
    """The compiled pattern; ValueError (with the engine's reason) when it does not compile."""
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise ValueError(str(exc)) from exc


def search(pattern: str, text: str, *, where: str) -> Match | None:
    """The first match of `pattern` in `text`; BadInput naming `where` when it runs past the limit."""
    try:
        return compile_pattern(pattern).search(text, timeout=TIME_LIMIT_S)
    except TimeoutError as exc:
        raise BadInput(
            f"{where}: the pattern {pattern!r:.80} ran past {TIME_LIMIT_S:g} s on a text of {len(text):,} "
            "characters: it backtracks without end (nested quantifiers such as (a|aa)+); rewrite it"
        ) from exc
