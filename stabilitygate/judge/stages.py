"""The adaptive pull-request design: a look, a first stage, a second stage (docs/design.md §6, "Stages").

A compared case is sampled in up to three steps: `look` samples; up to `first` (= `samples`) unless
every one of them gave the baseline's most common answer (clearly unchanged: it stops; a case with
absolute thresholds has no look, they are judged on all `samples`); up to `last`
(= `max_samples`) when the first stage leaves its tests inconclusive. Each significance test of the
case is computed on the first `first` samples (p1) and, after a second stage, on all of them (p2),
and enters the run's family as

    P = min(p1 / w, p2 / (1 - w)),   w = FIRST_STAGE_WEIGHT

which is a valid p-value whatever rule chose to go on (the union bound over the two fixed-size
tests), so the family's correction keeps the run's false-alarm rate at or below alpha across the
stages. A case stopped at the look is never failed by a significance test (stopping early only
ever accepts). Without a second stage (`last == first`) P is p1 and nothing changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stabilitygate.against_baseline import StageSizes
from stabilitygate.judge.wording import same_value
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.suite.sizes import max_size
from stabilitygate.typed_json import JSON

#: Share of each test's level spent on the first stage's p-value; the rest goes to the second's.
FIRST_STAGE_WEIGHT = 0.3
#: A first-stage p-value above this is clearly unchanged: the case stops at `samples`.
FUTILITY_P = 0.2
#: The look comes after this share of `samples` (with at least MIN_LOOK samples).
LOOK_SHARE = 0.5
MIN_LOOK = 5

StageName = Literal["look", "first", "second"]
Next = Literal["stop", "more"]


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
    """How many samples a compared case may draw at each step."""

    first: int  # sampling.samples
    last: int  # sampling.max_samples (== first: no second stage)
    can_look: bool = True  # False for a case with absolute thresholds: they are judged on all `samples`

    @property
    def adaptive(self) -> bool:
        return self.last > self.first

    @property
    def look(self) -> int | None:
        """Samples after which a unanimous case stops; None without a second stage or for small N."""
        size = int(self.first * LOOK_SHARE)
        return size if self.adaptive and self.can_look and size >= MIN_LOOK else None

    @property
    def weight(self) -> float:
        return FIRST_STAGE_WEIGHT if self.adaptive else 1.0

    def stage_of(self, n: int) -> StageName:
        """Which step a case that drew n samples (its highest index + 1) ended in."""
        if n > self.first:
            return "second"
        look = self.look
        return "look" if look is not None and n <= look else "first"


def design_for(case: ResolvedCase, compared: bool) -> StageDesign:
    """A case compared with its baseline may take a second stage; any other has nothing to test."""
    limits = case.thresholds.model_dump(exclude_none=True, exclude={"max_sample_errors"})
    return StageDesign(case.samples, max_size(case) if compared else case.samples, can_look=not limits)


def combined_p(design: StageDesign, p_first: float, p_final: float | None) -> float:
    """The test's p-value across the stages (p_final: on every sample, after a second stage)."""
    if not design.adaptive:
        return p_first
    p = p_first / design.weight
    if p_final is not None:
        p = min(p, p_final / (1 - design.weight))
    return min(1.0, p)


def combined_p_min(design: StageDesign, p_min_first: float, p_min_last: float) -> float:
    """The least combined p-value the test could reach (p_min_last: at `last` samples)."""
    if not design.adaptive:
        return p_min_first
    return min(1.0, p_min_first / design.weight, p_min_last / (1 - design.weight))


def look_says_unchanged(answers: Sequence[JSON], baseline_answer: JSON, look: int) -> bool:
    """Every one of the first `look` samples (in index order) gave the baseline's most common
    answer, or with no parser its most common completion; a failed sample is None."""
    return len(answers) >= look and all(a is not None and same_value(a, baseline_answer) for a in answers[:look])


def after_first_stage(p_values: Sequence[float], rejected: bool, *, decided: bool) -> Next:
    """Whether a case goes on to a second stage after its first: only when its tests are inconclusive.

    `rejected`: the family already fails the case on its first stage; `decided`: nothing a second
    stage could change (a threshold failed, no baseline to compare with, or a measurement error).
    """
    if rejected or decided or not p_values:
        return "stop"
    return "stop" if all(p > FUTILITY_P for p in p_values) else "more"


@dataclass(frozen=True)
class StagedRun:
    """How a pull-request run was sampled, read from its samples (pipeline/stages.py)."""

    first: Mapping[str, CaseMeasurement]  # measured on the first `samples` samples: cases with a second stage
    looked: frozenset[str]  # cases stopped at the look
    adaptive: bool = True  # False (recording a baseline): every case is judged as one fixed stage
