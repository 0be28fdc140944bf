"""Where a case stands against its baseline, as the report's `baseline` key states it (docs/design.md §8).

`Compared` is a compared case's comparison once the run's correction is known (built by
`judge.conclusion`); `NotCompared` says why there was nothing to compare with. Both are read back
by `status`, so a report's comparisons keep their types through `merge` and `comment-from`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from stabilitygate.metrics import MetricName, Metrics, SampleCount
from stabilitygate.typed_json import JSON, Count, Flag, Share, Signed, omitted_when_default

__all__ = ["AgainstBaseline", "Compared", "Deltas", "ModalShown", "NotCompared", "StageSizes"]

NotComparedStatus = Literal["no_baseline", "missing", "changed", "not_measured", "unchanged"]
MODAL_CHARS = 300  # of a modal completion kept in the record: the full text is in `completions`


@dataclass(frozen=True)
class ModalShown:
    """The most common answer (or completion) of a run, as the report shows it, and its count."""

    value: JSON
    count: SampleCount
    n: SampleCount

    @classmethod
    def shortened(cls, value: JSON, count: int, n: int) -> ModalShown:
        if isinstance(value, str) and len(value) > MODAL_CHARS:
            value = value[: MODAL_CHARS - 1] + "…"
        return cls(value, count, n)


@dataclass(frozen=True)
class Deltas:
    """Current minus baseline, for the report's table."""

    unique_completions: Annotated[int, Field(strict=True)] | None = None
    agreement: Signed | None = None
    cosine_min: Annotated[float, Field(ge=-2, le=2, strict=True)] | None = None


@dataclass(frozen=True)
class StageSizes:
    """The case's sampling design: `samples` first, up to `max_samples`, with a look at `look`."""

    samples: SampleCount
    max_samples: SampleCount
    look: SampleCount | None = None


@dataclass(frozen=True, kw_only=True)
class Compared:
    """A compared case: its counts, raw and corrected p-values, what changed and what it could see.

    Fields with defaults are the ones a report of an older version may lack.
    """

    status: Literal["compared"] = "compared"
    hash: str
    # The drop test of the primary agreement.
    metric: MetricName | None = None
    k: SampleCount | None = None
    n: SampleCount | None = None
    baseline_k: SampleCount | None = None
    baseline_n: SampleCount | None = None
    # "permutation": the case's exact test over the splits of its pooled answers (docs/design.md §6);
    # reports before it name the older drop tests.
    test: Literal["permutation", "boschloo", "fisher"] | None = None
    p_value: Share | None = None  # the rule's own p-value
    p_adjusted: Share | None = None  # after the run's min-p step-down (docs/design.md §6)
    drop: Signed | None = None
    dropped: Flag = False
    family_size: Count | None = None  # how many cases were tested in the run's family
    # The modal answer (or completion) and its guard.
    kind: Literal["answer", "completion"] = "answer"
    modal: ModalShown | None = None
    baseline_modal: ModalShown | None = None
    answer_changed: Flag = False
    answer_p_value: Share | None = None
    answer_p_adjusted: Share | None = None
    # The modal completion's meaning and its guard.
    modal_cosine: Signed | None = None
    drift_checked: Flag = False
    semantic_drift: Flag = False
    meaning_p_value: Share | None = None
    meaning_p_adjusted: Share | None = None
    # The share of samples whose answer parsed (cases with a parser), and its drop.
    parsed_k: SampleCount | None = omitted_when_default()
    parsed_n: SampleCount | None = omitted_when_default()
    baseline_parsed_k: SampleCount | None = omitted_when_default()
    baseline_parsed_n: SampleCount | None = omitted_when_default()
    parsed_p_value: Share | None = omitted_when_default()
    parsed_p_adjusted: Share | None = omitted_when_default()
    parsed_dropped: Flag = omitted_when_default(False)
    # The backends.
    fingerprints: tuple[str, ...] = ()
    baseline_fingerprints: tuple[str, ...] = ()
    fingerprints_changed: Flag = False
    warned: Flag = False  # a change that is not significant
    # A significant change by some rule: told beside a threshold failure, whose verdict (fail) wins.
    regressed: Flag = omitted_when_default(False)
    metrics: Metrics = Metrics()  # the baseline's
    deltas: Deltas = Deltas()
    # The stages the case was sampled in, and the smallest drop it catches with 80% power.
    stage: Literal["look", "first", "second"] | None = None
    stages: StageSizes | None = None
    tested: Flag = omitted_when_default(True)  # False: stopped at a check, clearly unchanged, not tested
    detectable_drop: Share | None = None
    power_level: Share | None = None
    suite_baseline_samples: Count | None = None  # what the suite records now (the baseline may differ)


@dataclass(frozen=True)
class NotCompared:
    """A case with nothing to compare with: why, and the hashes that tell."""

    status: NotComparedStatus
    hash: str | None = omitted_when_default()  # the baseline entry's, when there is one
    current_hash: str | None = omitted_when_default()  # the case's now, when it changed


AgainstBaseline = Annotated[Compared | NotCompared, Field(discriminator="status")]
