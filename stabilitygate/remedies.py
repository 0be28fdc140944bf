"""The typed results of the remedies a run can measure beside a case: its variants and the concurrency probe.

Both are reported, never judged: they do not fail the gate, enter the baseline or join the run's
Holm family; each has a family of its own (docs/design.md §16, "Remedies"). Field names are the
report JSON's keys, written and read by `stabilitygate.typed_json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from stabilitygate.metrics import Agreement, SampleCount
from stabilitygate.typed_json import JSON, Count, Flag, Number, Share, omitted_when_default

__all__ = ["Change", "ProbeResult", "VariantResult"]

Change = Literal["better", "worse", "same"]


@dataclass(frozen=True, kw_only=True)
class VariantResult:
    """One variant of a case, measured with the same sampling and metrics as the case as written."""

    name: str
    overrides: tuple[str, ...]  # what it replaces: provider, params, system, prompt, messages, answer, idempotency
    samples_requested: SampleCount
    samples_ok: SampleCount
    sample_errors: SampleCount
    unique_completions: Count | None = None
    answers: Count | None = None  # distinct parsed answers (a case with a parser)
    parsed_agreement: Share | None = None
    semantic_agreement: Share | None = None
    tokens: Count | None = None  # prompt + completion tokens the variant's samples took
    primary: Agreement | None = None  # on the metric of the case's own primary agreement
    p_value: Number | None = None  # two-sided exact test against the case as written
    p_holm: Number | None = None  # Holm over every variant test of the run
    significant: Flag = False  # p_holm < alpha
    change: Change | None = None  # the variant's agreement against the case's
    error: str | None = omitted_when_default()  # why the variant could not be measured
    # What a remedy may cost (docs/remedies.md): the share of answers equal to the case's `expected`,
    # and the most common answer (parsed; the completion, cut, without a parser) with its count.
    accuracy: Share | None = omitted_when_default()
    modal: JSON = omitted_when_default()
    modal_count: SampleCount | None = omitted_when_default()


@dataclass(frozen=True, kw_only=True)
class ProbeResult:
    """`sampling.probe: concurrency`: the case's first half drawn one at a time, the second under load."""

    compared: Literal["answers", "completions"]  # parsed answers with a parser, else exact texts
    alone: SampleCount  # successful samples drawn one at a time
    under_load: SampleCount
    alone_distinct: Count  # distinct answers among those that parsed (completions: distinct texts)
    under_load_distinct: Count
    modal_alone: SampleCount  # the alone half's most common answer, in the alone half
    modal_under_load: SampleCount  # the same answer under load
    p_value: Number | None  # one-sided: that answer is rarer under load (the case's exact test, judge/case_test.py)
    p_holm: Number | None  # Holm over the run's probes
    depends: Flag  # p_holm < alpha: the answers depend on concurrency
    # Answers that did not parse, in each half (a case with a parser): not answers, so not counted above.
    alone_unparsed: Count = omitted_when_default(0)
    under_load_unparsed: Count = omitted_when_default(0)

    @property
    def nothing_parsed(self) -> bool:
        """A case with a parser none of whose answers parsed in either half: the probe compared nothing."""
        return self.compared == "answers" and self.alone_unparsed == self.alone and (
            self.under_load_unparsed == self.under_load)  # fmt: skip
