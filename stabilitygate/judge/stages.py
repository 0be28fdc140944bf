"""The adaptive pull-request design: checks every half of `samples`, up to `max_samples`.

A compared case is sampled up to its first check, then checked: its baseline's modal answer (with no
parser its modal completion, or meaning), k_b of the baseline's n_b, against how often the samples so
far gave it; Fisher's one-sided p of that drop above LOOK_STOP_P (at the look, before `samples`) or
CHECK_STOP_P (later) says the case is clearly unchanged and it stops; otherwise it draws up to its
next check, and at `max_samples` it is tested. A case with absolute thresholds has no look: they are
judged on all of `samples`. Without a second stage (`max_samples` equal to `samples`) the case is
drawn once and tested.

Only a case that reached its last stage is tested, and its test (judge/case_test.py) weighs each
split of its pooled answers by the chance, `survival`, that a run holding that split passes every
check: given its pooled answers and the stage it stopped at, every ordering that stops there is
equally likely, so the test is exact and a case that stopped (it can never be failed by a test)
takes no part in the run's family (docs/design.md §6, "Stages").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from stabilitygate.against_baseline import StageSizes
from stabilitygate.judge.exact import Floats, Ints, drop_p_row, subsample_matrix
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.suite.sizes import max_size

#: At the look (a check before `samples`), a drop p above this stops the case: clearly unchanged.
LOOK_STOP_P = 0.5
#: At every later check.
CHECK_STOP_P = 0.3
MIN_LOOK = 5  # samples: no look on fewer
#: Thresholds that leave a case its look: a limit on failed samples, and a default-on floor of parsed
#: answers (issue 26's min_parsed), which would otherwise take the look from every case with a parser.
LOOK_KEEPS = frozenset({"max_sample_errors", "min_parsed"})
#: A second stage needs a baseline of at least this many times `max_samples` (the defaults: 5 x samples
#: against 2.5 x samples); docs/design.md §6, "Stages", shows the power it would cost against less.
BASELINE_PER_LAST = 2

StageName = Literal["look", "first", "second"]


@dataclass(frozen=True)
class StageFacts:
    """How a compared case was sampled, and the smallest drop it could catch (the report's record)."""

    stage: StageName
    sizes: StageSizes
    detectable_drop: float | None
    power_level: float
    suite_baseline_samples: int | None


@dataclass(frozen=True)
class StageDesign:
    """How many samples a compared case may draw, and where it is checked."""

    first: int  # sampling.samples
    last: int  # sampling.max_samples (== first: no second stage)
    can_look: bool = True  # False for a case with absolute thresholds: they are judged on all `samples`

    @property
    def adaptive(self) -> bool:
        return self.last > self.first

    @property
    def step(self) -> int:
        return max(self.first // 2, 1)

    @property
    def checks(self) -> tuple[int, ...]:
        """Sample counts at which the case is checked: the look (half of `samples`), `samples`, then
        every half of `samples` until `max_samples`, which ends it; none without a second stage."""
        if not self.adaptive:
            return ()
        look = (self.step,) if self.can_look and MIN_LOOK <= self.step < self.first else ()
        later = range(self.first, self.last, self.step)
        return (*look, *later)

    @property
    def look(self) -> int | None:
        checks = self.checks
        return checks[0] if checks and checks[0] < self.first else None

    def stop_p(self, check: int) -> float:
        return LOOK_STOP_P if check < self.first else CHECK_STOP_P

    def stage_of(self, n: int) -> StageName:
        """Which step a case that drew n samples ended in."""
        if n > self.first:
            return "second"
        look = self.look
        return "look" if look is not None and n <= look else "first"

    def next_size(self, n: int) -> int:
        """The samples a case holding n goes on to: its next check, else the last stage."""
        return next((c for c in self.checks if c > n), self.last)

    @property
    def sizes(self) -> StageSizes:
        return StageSizes(samples=self.first, max_samples=self.last, look=self.look)


def design_for(case: ResolvedCase, baseline_n: int | None) -> StageDesign:
    """The design of a case whose baseline holds baseline_n samples (None: nothing to compare with, one
    stage). Checks and a second stage only against a baseline of at least BASELINE_PER_LAST times
    `max_samples`: against a smaller one, the checks cost the test more power than they save."""
    limits = case.thresholds.model_dump(exclude_none=True, exclude=set(LOOK_KEEPS))
    last = max_size(case)
    adaptive = baseline_n is not None and baseline_n >= BASELINE_PER_LAST * last
    return StageDesign(case.samples, last if adaptive else case.samples, can_look=not limits)


def goes_on(design: StageDesign, check: int, modal_before: int, n_before: int, modal_now: int, n_now: int) -> bool:
    """Whether a case checked after `check` samples draws more: the drop of the baseline's modal answer
    (modal_before of n_before in the baseline, modal_now of the n_now successful samples so far) is
    not clearly absent."""
    return float(drop_p_row(modal_before, n_before, n_now)[modal_now]) <= design.stop_p(check)


@dataclass(frozen=True)
class CasePath:
    """How a compared case was sampled, read from its samples: the design, how many it drew, and how
    many of the first `check` succeeded at each check it passed (docs/design.md §6, "Stages")."""

    design: StageDesign
    drawn: int  # its highest sample index + 1
    ok_at_checks: tuple[int, ...]

    @property
    def tested(self) -> bool:
        """Reached its last stage: only such a case is tested (a stopped one cannot fail by a test)."""
        return not self.design.adaptive or self.drawn >= self.design.last

    @property
    def stage(self) -> StageName:
        return self.design.stage_of(self.drawn)

    def survival(self, n_before: int, n_now: int) -> CheckSurvival | None:
        """Each split's chance of passing every check (None: a fixed design, nothing to weigh)."""
        if not self.design.adaptive:
            return None
        thresholds = tuple(self.design.stop_p(c) for c in self.design.checks)
        return CheckSurvival(n_before, (*self.ok_at_checks, n_now), thresholds)


def path_of(design: StageDesign, indices_ok: Sequence[tuple[int, bool]]) -> CasePath:
    """The path of a case from its samples' (index, succeeded) pairs."""
    drawn = 1 + max((i for i, _ in indices_ok), default=-1)
    checks = [c for c in design.checks if c < drawn] if design.adaptive else []
    ok = tuple(sum(1 for i, good in indices_ok if good and i < c) for c in checks)
    return CasePath(design, drawn, ok)


@dataclass(frozen=True)
class CheckSurvival:
    """P(a run passes every check | the baseline's modal count, that answer's count in the run)."""

    n_before: int
    sizes: tuple[int, ...]  # successful samples at each check, then at the end
    thresholds: tuple[float, ...]

    def __call__(self, modal_before: Ints, modal_now: Ints) -> Floats:
        out = np.zeros(modal_before.shape, dtype=np.float64)
        for b in np.unique(modal_before):
            rows = modal_before == b
            chance = _survival_row(int(b), self.n_before, self.sizes, self.thresholds)
            out[rows] = chance[np.clip(modal_now[rows], 0, self.sizes[-1])]
        return out


@lru_cache(maxsize=4096)
def _survival_row(modal_before: int, n_before: int, sizes: tuple[int, ...], thresholds: tuple[float, ...]) -> Floats:
    """P(passing every check | y of the answer among the run's last size), for every y; the run's
    order uniform, so the answer's count at each check is a hypergeometric chain (judge/exact.py)."""
    alive: Floats | None = None  # P(passed so far, x of the answer among the samples so far), by x
    previous = 0
    for size, stop_above in zip(sizes[:-1], thresholds, strict=True):
        carried = np.ones(size + 1) if alive is None else subsample_matrix(previous, size).T @ alive
        alive = carried * (drop_p_row(modal_before, n_before, size) <= stop_above)
        previous = size
    if alive is None:
        return np.ones(sizes[-1] + 1)
    result: Floats = subsample_matrix(previous, sizes[-1]).T @ alive
    return result
