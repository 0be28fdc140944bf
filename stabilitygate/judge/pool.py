"""A case's answers in both runs, pooled: the data its exact conditional test rests on.

Under the null (the pull request answers like the baseline) the answers of both runs pooled are fixed
and every split of them into a baseline of n_b and a run of n_c is equally likely; the case's test
weighs the observed split against all of them (judge/case_test.py, docs/design.md §6, "The case's
test"). Answers are aligned across the runs by a `same` predicate: canonical equality for parsed
answers and completions, "means the same" (cosine at the bar, or the entailment judge) for meanings,
with the greedy rule of the semantic clusters: the baseline's rows first, each row joining the first
group whose first member is the same, else opening one.

Classes of a pool: the answers given at least twice in both runs together, ordered by their canonical
key (so that ties between modes are broken the same way in every split); `singles`, answers given
once (interchangeable: each is a mode of one), among them the baseline's samples beyond the rows it
keeps; and `failures`, samples without an answer (parse failures), which count against agreement and
are never a mode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stabilitygate.measure.agreement import value_key
from stabilitygate.typed_json import JSON

#: Whether two rows' values are one class: equal answers, or texts of one meaning (those take `str`).
Same = Callable[[Any, Any], bool]


@dataclass(frozen=True)
class Counted:
    """An answer (or a completion) of a run and how many samples gave it."""

    value: JSON
    count: int


@dataclass(frozen=True)
class Pool:
    """The case's answers, counted per class in each run (docs/design.md §6)."""

    baseline: tuple[int, ...]  # per answer given at least twice in both runs, by canonical key
    current: tuple[int, ...]
    singles: tuple[int, int] = (0, 0)  # (in the baseline, now)
    failures: tuple[int, int] = (0, 0)

    @property
    def n_baseline(self) -> int:
        return sum(self.baseline) + self.singles[0] + self.failures[0]

    @property
    def n_current(self) -> int:
        return sum(self.current) + self.singles[1] + self.failures[1]

    @property
    def pooled(self) -> tuple[int, ...]:
        """Pooled count of every class: the answers, then the singles, then the failures."""
        answers = tuple(b + c for b, c in zip(self.baseline, self.current, strict=True))
        return (*answers, sum(self.singles), sum(self.failures))

    @property
    def observed(self) -> tuple[int, ...]:
        """The baseline's count of every class: the split that was drawn."""
        return (*self.baseline, self.singles[0], self.failures[0])


@dataclass(frozen=True)
class Runs:
    """One case's answers as the two runs counted them, before they are aligned."""

    before: Sequence[Counted]  # the baseline's kept rows
    now: Sequence[Counted]
    n_before: int  # successful samples of each run
    n_now: int
    failures: tuple[int, int] = (0, 0)  # samples without an answer in each run
    top_before: int | None = None  # the baseline's recorded modal count, when its rows undercount it


def pool_of(runs: Runs, same: Same) -> Pool:
    """The runs' rows aligned by `same` and counted per class (docs/design.md §6, "The case's test")."""
    leaders: list[JSON] = []
    before = [_join(leaders, row.value, same) for row in runs.before]
    now = [_join(leaders, row.value, same) for row in runs.now]
    size = len(leaders)
    counts_b, counts_c = [0] * size, [0] * size
    for group, row in zip(before, runs.before, strict=True):
        counts_b[group] += row.count
    for group, row in zip(now, runs.now, strict=True):
        counts_c[group] += row.count
    unknown_b = runs.n_before - sum(counts_b) - runs.failures[0]
    if runs.top_before is not None and before and runs.top_before > counts_b[before[0]]:
        # The baseline's largest cluster holds completions beyond the rows it keeps.
        moved = min(runs.top_before - counts_b[before[0]], max(unknown_b, 0))
        counts_b[before[0]] += moved
        unknown_b -= moved
    unknown_c = runs.n_now - sum(counts_c) - runs.failures[1]
    keys = [value_key(leader) for leader in leaders]
    return _classes(counts_b, counts_c, keys, (max(unknown_b, 0), max(unknown_c, 0)), runs.failures)


def _join(leaders: list[JSON], value: JSON, same: Same) -> int:
    """The group `value` joins: the first whose first member is the same, else a new one."""
    for i, leader in enumerate(leaders):
        if same(value, leader):
            return i
    leaders.append(value)
    return len(leaders) - 1


def _classes(
    counts_b: list[int], counts_c: list[int], keys: list[str], unknown: tuple[int, int], failures: tuple[int, int]
) -> Pool:
    """Groups given at least twice in both runs, by key; the ones given once join the singles."""
    singles_b, singles_c = unknown
    kept: list[tuple[str, int, int]] = []
    for key, b, c in zip(keys, counts_b, counts_c, strict=True):
        if b + c >= 2:
            kept.append((key, b, c))
        else:
            singles_b, singles_c = singles_b + b, singles_c + c
    kept.sort()
    return Pool(
        baseline=tuple(b for _, b, _ in kept),
        current=tuple(c for _, _, c in kept),
        singles=(singles_b, singles_c),
        failures=failures,
    )
