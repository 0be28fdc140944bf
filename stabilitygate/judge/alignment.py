"""The answers of a baseline and a run aligned for the guard (judge/guard.py): which rows are one answer.

Answers are aligned by a `same` predicate: canonical equality for parsed answers and completions, or
"means the same" (cosine at the bar, or the entailment judge) for meanings, with the same greedy rule
as the semantic clusters: the baseline's rows first (its modal opens group 0), each row joining the
first group whose first member is the same, else opening one (docs/design.md §6, "The guard").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stabilitygate.judge.guard import Categories, aligned, rarer_now_p, testable
from stabilitygate.typed_json import JSON

Same = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class Counted:
    """An answer (or a completion) of a run and how many samples gave it."""

    value: JSON
    count: int


def guard_p(
    rows_before: Sequence[Counted],
    rows_now: Sequence[Counted],
    same: Same,
    sizes: tuple[int, int],
) -> float | None:
    """The guard's p-value over counted rows; None when the runs pooled hold one answer only (nothing
    can differ, so the test is left out of the Holm family)."""
    groups = _groups([r.value for r in rows_before], [r.value for r in rows_now], same)
    categories = _categories(groups, rows_before, rows_now, *sizes)
    return rarer_now_p(categories) if testable(categories) else None


def _groups(before: list[Any], now: list[Any], same: Same) -> tuple[list[int], list[int]]:
    """The group of each row of both runs: the baseline's rows first (its modal opens group 0), each
    row joining the first group whose first member is the same answer (or meaning), else opening one."""
    leaders: list[Any] = []

    def group_of(value: Any) -> int:
        for i, leader in enumerate(leaders):
            if same(value, leader):
                return i
        leaders.append(value)
        return len(leaders) - 1

    return [group_of(v) for v in before], [group_of(v) for v in now]


def _categories(
    groups: tuple[list[int], list[int]],
    rows_before: Sequence[Counted],
    rows_now: Sequence[Counted],
    n_before: int,
    n_now: int,
) -> Categories:
    """Counts per group in each run; samples without a known answer are groups of one."""
    size = max([*groups[0], *groups[1], -1]) + 1
    before, now = [0] * size, [0] * size
    for g, row in zip(groups[0], rows_before, strict=True):
        before[g] += row.count
    for g, row in zip(groups[1], rows_now, strict=True):
        now[g] += row.count
    return aligned(before, now, max(n_before - sum(before), 0), max(n_now - sum(now), 0))
