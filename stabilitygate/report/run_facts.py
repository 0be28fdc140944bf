"""How a run went as a whole, as the report states it: sampling, the semantic layer, the baseline, the judge.

Part of the typed report (report/model.py, which re-exports these): the report JSON's `run` key
(docs/design.md §8, "Files"), written and read by `stabilitygate.typed_json`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from stabilitygate.conditions import Conditions
from stabilitygate.judge.fail_on import FailOn
from stabilitygate.judge.threshold_noise import NoisyThreshold
from stabilitygate.report.entailment_facts import EntailmentFacts
from stabilitygate.results import EmbeddingFacts
from stabilitygate.typed_json import Count, Flag, omitted_when_default


@dataclass(frozen=True)
class SamplingFacts:
    """What sampling did: only a live run (or the merge of live shards) knows it."""

    requests: Count
    retries: Count
    interrupted: Flag
    budget_exhausted: Flag
    fatal_error: str | None = None
    early_stopped: Mapping[str, str] = field(default_factory=dict)
    samples_file: str | None = None
    shard: str | None = None
    concurrency: Count | None = omitted_when_default()  # requests in flight (docs/design.md §16)

    @property
    def could_not_measure(self) -> bool:
        return self.interrupted or self.budget_exhausted or self.fatal_error is not None

    @classmethod
    def merged(cls, shards: Sequence[SamplingFacts]) -> SamplingFacts:
        """The facts of a whole run that ran as these shards."""
        return cls(
            requests=sum(s.requests for s in shards),
            retries=sum(s.retries for s in shards),
            interrupted=any(s.interrupted for s in shards),
            budget_exhausted=any(s.budget_exhausted for s in shards),
            fatal_error=next((s.fatal_error for s in shards if s.fatal_error), None),
            early_stopped={k: v for s in shards for k, v in s.early_stopped.items()},
            samples_file=None,
            shard=None,
            concurrency=max((s.concurrency for s in shards if s.concurrency is not None), default=None),
        )


#: What became of the baseline, each for its reason: `compared` (the run read one), `missing` (there is
#: none yet: every case is new), `updated` (this run recorded it), or not written, with why (a
#: recording the run could not measure is refused, and the old file is kept).
BaselineStatus = Literal["compared", "missing", "updated", "not written: the run could not measure"]


@dataclass(frozen=True)
class BaselineFacts:
    """The baseline the run read (and wrote): its path, what became of it, and what does not fit the suite.

    The keys after `status` appear only when they apply, so a report of a plain run keeps its bytes.
    """

    path: str
    status: BaselineStatus
    recorded_suite: str | None = omitted_when_default()  # another suite's name, accepted on purpose
    orphans: tuple[str, ...] = omitted_when_default(())  # entries no case matches: renamed or deleted cases
    not_recorded: tuple[str, ...] = omitted_when_default(())  # cases --update-baseline refused: nothing parsed
    noisy_thresholds: tuple[NoisyThreshold, ...] = omitted_when_default(())  # flagged by --update-baseline
    kept: Count = omitted_when_default(0)  # updated by a partial run: entries of other cases kept as they were
    recorded: Count = omitted_when_default(0)  # updated: the entries this run wrote (the file holds these + kept)


@dataclass(frozen=True)
class ConditionsFacts:
    """How each case's samples were drawn, and how that differs from its baseline's (docs/design.md §16.4).

    Only live sampling knows it, so it is here and not in the cases: `score` of a run's samples gives
    the run's cases, and a scored or merged run has none of it."""

    cases: Mapping[str, Conditions]  # case id -> how its samples were drawn
    differ: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # case id -> what differs from its baseline
    advice: Mapping[str, str] = field(default_factory=dict)  # case id -> the suggestion the difference supports


@dataclass(frozen=True)
class RunFacts:
    """How the run went as a whole; always present in a report (sampling only after live sampling)."""

    baseline: BaselineFacts
    embedding: EmbeddingFacts | None = None  # None: the semantic layer was off
    fail_on: FailOn = "regression"
    sampling: SamplingFacts | None = omitted_when_default()
    changed_only: Flag = omitted_when_default(False)  # only cases changed since the baseline were sampled
    entailment: EntailmentFacts | None = omitted_when_default()  # the entailment judge, when a case has `equivalence:`
    conditions: ConditionsFacts | None = omitted_when_default()  # how live sampling drew each case

    @property
    def could_not_measure(self) -> bool:
        return self.sampling is not None and self.sampling.could_not_measure
