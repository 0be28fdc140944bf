"""How a run went as a whole, as the report states it: sampling, the semantic layer, the baseline, the judge.

Part of the typed report (report/model.py, which re-exports these); `to_json` and `from_json` are the
report JSON's `run` key (docs/design.md §8, "Files").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from stabilitygate.report.judge_facts import JudgeFacts
from stabilitygate.results import JSON


@dataclass(frozen=True)
class SamplingFacts:
    """What sampling did: only a live run (or the merge of live shards) knows it."""

    requests: int
    retries: int
    interrupted: bool
    budget_exhausted: bool
    fatal_error: str | None
    early_stopped: Mapping[str, str]
    samples_file: str | None
    shard: str | None

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
        )

    def to_json(self) -> dict[str, JSON]:
        data = asdict(self)
        data["early_stopped"] = dict(sorted(self.early_stopped.items()))
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> SamplingFacts:
        return cls(
            requests=int(data["requests"]),
            retries=int(data["retries"]),
            interrupted=bool(data["interrupted"]),
            budget_exhausted=bool(data["budget_exhausted"]),
            fatal_error=data.get("fatal_error"),
            early_stopped=dict(data.get("early_stopped") or {}),
            samples_file=data.get("samples_file"),
            shard=data.get("shard"),
        )


@dataclass(frozen=True)
class EmbeddingFacts:
    """The semantic layer as the report describes it.

    `texts_from_cache` is for the job summary only: the report JSON must not depend on whether the
    embedding cache was warm, so it never enters `to_json()`.
    """

    model: str | None
    texts_embedded: int
    max_word_pieces: int | None
    truncation: str
    texts_from_cache: int | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, JSON]:
        return {
            "model": self.model,
            "texts_embedded": self.texts_embedded,
            "max_word_pieces": self.max_word_pieces,
            "truncation": self.truncation,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON] | None) -> EmbeddingFacts | None:
        if data is None:
            return None
        return cls(data.get("model"), int(data.get("texts_embedded") or 0), data.get("max_word_pieces"),
                   str(data.get("truncation") or ""))  # fmt: skip


@dataclass(frozen=True)
class BaselineFacts:
    path: str
    status: str  # compared | missing | updated | not written: ...


@dataclass(frozen=True)
class RunFacts:
    """How the run went as a whole; always present in a report (sampling only after live sampling)."""

    baseline: BaselineFacts
    embedding: EmbeddingFacts | None
    fail_on: str
    sampling: SamplingFacts | None = None
    changed_only: bool = False  # only cases changed since the baseline were sampled
    judge: JudgeFacts | None = None  # the entailment judge, when a case has `equivalence:`

    @property
    def could_not_measure(self) -> bool:
        return self.sampling is not None and self.sampling.could_not_measure

    def to_json(self) -> dict[str, JSON]:
        data: dict[str, JSON] = {
            "baseline": asdict(self.baseline),
            "embedding": self.embedding.to_json() if self.embedding is not None else None,
            "fail_on": self.fail_on,
        }
        if self.sampling is not None:
            data["sampling"] = self.sampling.to_json()
        if self.changed_only:
            data["changed_only"] = True
        if self.judge is not None:
            data["judge"] = self.judge.to_json()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> RunFacts:
        baseline = data["baseline"]
        sampling = data.get("sampling")
        return cls(
            baseline=BaselineFacts(str(baseline["path"]), str(baseline["status"])),
            embedding=EmbeddingFacts.from_json(data.get("embedding")),
            fail_on=str(data["fail_on"]),
            sampling=SamplingFacts.from_json(sampling) if sampling is not None else None,
            changed_only=bool(data.get("changed_only", False)),
            judge=JudgeFacts.from_json(data.get("judge")),
        )
