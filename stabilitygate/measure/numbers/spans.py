"""Stretches of a text passed over (code, checks, remarks), merged so that a lookup is a bisection."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable


class Spans:
    """The union of half-open [start, end) stretches; `pos in spans` costs log n, however many there are."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for start, end in sorted(spans):
            if self._ends and start <= self._ends[-1]:
                self._ends[-1] = max(self._ends[-1], end)
            elif start < end:
                self._starts.append(start)
                self._ends.append(end)

    def __contains__(self, pos: int) -> bool:
        i = bisect_right(self._starts, pos) - 1
        return i >= 0 and pos < self._ends[i]
