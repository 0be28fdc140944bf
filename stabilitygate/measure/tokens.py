"""Where completions part ways: tokens are matches of `\\w+|[^\\w\\s]` (docs/design.md §5, "The numbers")."""

from __future__ import annotations

import re
from collections.abc import Iterable

TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text)


def token_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of each token."""
    return [m.span() for m in TOKEN.finditer(text)]


def _first_difference(a: list[str], b: list[str]) -> int | None:
    """0-based index of the first position where a and b differ (one ending counts), None if equal."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def divergence_token(texts: Iterable[str]) -> int | None:
    """1-based index of the first token at which not all texts agree; None when their tokens all agree.

    A text that ends where another goes on disagrees at the next position. Texts that differ only in
    whitespace have equal tokens and give None.
    """
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < 2:
        return None
    first = tokenize(distinct[0])
    earliest: int | None = None
    for other in distinct[1:]:
        at = _first_difference(first, tokenize(other))
        if at is not None and (earliest is None or at < earliest):
            earliest = at
    return None if earliest is None else earliest + 1
