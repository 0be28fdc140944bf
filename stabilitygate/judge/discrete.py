"""Holm's step-down correction made aware of discreteness (Tarone's refinement).

An exact test on counts cannot reach every p-value: a baseline whose agreement is already at the
floor can never show a significant drop, whatever the pull request samples. Plain Holm still counts
such a test in its family and so shrinks everyone else's level. Here each test brings the smallest
p-value it can reach at its counts (`p_min`); at every step of the step-down only the K tests that
could still be significant at alpha / K are counted (Tarone 1990; step-down: Hommel and Krummenauer
1998). With every `p_min` small enough, K is the number of tests left and this is Holm exactly.
docs/design.md §6, "The family", says why it keeps a run's false-alarm rate at or below alpha.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class FamilyTest:
    """One significance test of the family: its p-value and the least p-value it could have reached."""

    p_value: float
    p_min: float


@dataclass(frozen=True)
class FamilyDecision:
    """A test after the correction."""

    p_adjusted: float  # running maximum of p * K over the step-down, capped at 1
    level: float  # alpha / K at the test's own step
    counted: int  # K at the test's step: the tests that could still reach its level
    rejected: bool  # p_adjusted < alpha


def tarone_k(p_mins: Sequence[float], alpha: float) -> int:
    """The least K >= 1 such that at most K of the tests can reach a p-value below alpha / K."""
    return _k_of_sorted(sorted(p_mins), alpha)


def _k_of_sorted(p_mins: Sequence[float], alpha: float) -> int:
    # "At most k tests reach below alpha / k" turns true once and stays true as k grows, and holds
    # at k = the number of tests: a binary search finds the least such k.
    low, high = 1, max(1, len(p_mins))
    while low < high:
        k = (low + high) // 2
        if bisect_left(p_mins, alpha / k) <= k:
            high = k
        else:
            low = k + 1
    return low


def step_down(tests: Sequence[FamilyTest], alpha: float) -> list[FamilyDecision]:
    """Tarone-Holm decisions, in the order given; ties in p are broken by position."""
    order = sorted(range(len(tests)), key=lambda i: (tests[i].p_value, i))
    remaining = sorted(t.p_min for t in tests)  # the least p-values of the tests not yet stepped past
    decisions: dict[int, FamilyDecision] = {}
    running = 0.0
    for i in order:
        k = _k_of_sorted(remaining, alpha)
        running = max(running, min(1.0, tests[i].p_value * k))
        decisions[i] = FamilyDecision(running, alpha / k, k, running < alpha)
        remaining.pop(bisect_left(remaining, tests[i].p_min))
    return [decisions[i] for i in range(len(tests))]


def first_level(p_mins: Sequence[float], alpha: float) -> float:
    """The level of the family's first step: what a case with the smallest p-value is compared with."""
    return alpha / tarone_k(p_mins, alpha)
