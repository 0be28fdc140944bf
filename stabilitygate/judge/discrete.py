"""The run's correction across cases: an exact step-down that spends alpha on what can happen.

Each tested case brings its p-value and every value that p-value can take under the null (its support;
judge/case_test.py). Given the cases' pooled answers (and the stages they stopped at), the cases are
independent and each one's null distribution is known exactly: P(p_c <= u) is the largest support
value at most u, call it H_c(u). So the chance that the least p-value of a set S of cases is at most u
is exactly 1 - prod over S of (1 - H_c(u)), and the step-down below (min-p, Westfall and Young, with
that exact distribution) holds the run's false-alarm chance at or below alpha (docs/design.md §6, "The
family"). A case whose runs hold one answer between them has H_c = 0 below 1 and takes nothing; a
case that is nearly stable can reach only a few small values and takes only those.

Sorted ascending, the case at step i (R_i: it and the cases after it) gets
max over j <= i of 1 - prod over R_j of (1 - H_c(p_(j))); rejected when that is below alpha.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

_RELATIVE = 1e-12  # support values this close to u count as reached (sums of the same weights)


@dataclass(frozen=True)
class FamilyTest:
    """One tested case: its p-value and the values its p-value can take under the null, ascending."""

    p_value: float
    support: tuple[float, ...]

    def reach(self, u: float) -> float:
        """H(u) = P(p <= u) under the null: the largest support value at most u (1 at and above 1)."""
        if u >= 1.0:
            return 1.0
        i = bisect_right(self.support, u * (1 + _RELATIVE))
        return self.support[i - 1] if i else 0.0


@dataclass(frozen=True)
class StepDown:
    """The family corrected: each case's adjusted p-value, and the adjustment of any p at its step."""

    tests: tuple[FamilyTest, ...]
    order: tuple[int, ...]  # indices by p-value, ascending (ties by position)
    before: tuple[float, ...]  # per index: the running maximum of the steps before it

    def adjusted(self, index: int, p: float | None = None) -> float:
        """The adjusted p-value of case `index`, or of a p-value `p` it would have at its own step
        (a rule's p on the case's scale: at least the case's, so rejecting it rejects the case)."""
        value = self.tests[index].p_value if p is None else p
        remaining = [self.tests[i] for i in self.order[self.order.index(index) :]]
        return max(self.before[index], chance_of_least(remaining, value))


def chance_of_least(tests: Sequence[FamilyTest], u: float) -> float:
    """P(the least p-value of `tests` is at most u) under the null: 1 - prod(1 - H_c(u))."""
    none_below = 1.0
    for test in tests:
        none_below *= 1.0 - test.reach(u)
    return min(1.0, 1.0 - none_below)


def step_down(tests: Sequence[FamilyTest]) -> StepDown:
    """The exact discrete step-down over `tests` (docs/design.md §6, "The family")."""
    order = tuple(sorted(range(len(tests)), key=lambda i: (tests[i].p_value, i)))
    before = [0.0] * len(tests)
    running = 0.0
    for step, i in enumerate(order):
        before[i] = running
        running = max(running, chance_of_least([tests[j] for j in order[step:]], tests[i].p_value))
    return StepDown(tuple(tests), order, tuple(before))


def bonferroni_level(alpha: float, cases: int) -> float:
    """The least level any case of a family of `cases` is held to at its first step: alpha / cases
    (1 - prod(1 - H_c(u)) is at most the sum of the H_c(u), each at most u)."""
    return alpha / max(cases, 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: for the remedies' families of their own
    (variants, probes), which report and never fail the gate (docs/design.md §16).

    Sorted ascending, the i-th smallest (0-based) of m is multiplied by (m - i); a running maximum
    keeps the adjusted values monotone in the raw ones; nothing exceeds 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
