"""`stabilitygate plan`: what a run will cost and what it can see, before anything is spent.

Per case: the requests the run makes (what it draws first, what an unchanged case draws on average
through its checks, and the most it can draw), the tokens they should take (from the baseline's token
counts per sample, where it has them), the smallest drop in primary agreement the case catches with
80% power, and how many samples would catch a drop of `min_drop` that often, at the level a case is
sure of in the run's family (alpha over the compared cases), all computed exactly (judge/power.py;
docs/design.md §6, "Power you can read"). Then the thresholds that an
unchanged run would fail more often than alpha, given the baseline's counts (judge/threshold_noise.py).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from stabilitygate.cases import load_suite
from stabilitygate.judge.baseline import Baseline, BaselineCase, check_suite_name, read_baseline
from stabilitygate.judge.discrete import bonferroni_level
from stabilitygate.judge.power import MOST_SAMPLES, TARGET_POWER, detectable_drop, expected_requests, samples_for_power
from stabilitygate.judge.stages import StageDesign, design_for
from stabilitygate.judge.threshold_noise import NoisyThreshold, noisy_thresholds_of
from stabilitygate.pipeline.options import default_baseline_path
from stabilitygate.pipeline.variant_plan import VariantCost, price_variants
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.suite.sizes import baseline_size, checked_samples

#: Without a baseline the detectable drop is shown for a baseline agreeing this often.
ASSUMED_AGREEMENT = 0.95
FOOTNOTE = f"*: a baseline still to be recorded, at the recorded agreement (else an assumed {ASSUMED_AGREEMENT:.0%})"


@dataclass(frozen=True)
class CasePlan:
    id: str
    requests: int  # samples the run draws first (its look, or all of `samples`)
    expected_requests: float  # an unchanged case's samples on average, through its checks
    most_requests: int  # at its last stage
    tokens_per_sample: float | None  # prompt + completion tokens, from the baseline
    baseline_k: int
    baseline_n: int
    assumed: bool  # baseline_k / baseline_n is ASSUMED_AGREEMENT, not a recorded baseline
    detectable_drop: float | None  # None: no drop is caught that often
    samples_for_min_drop: int | None  # None: not even MOST_SAMPLES catch it that often

    @property
    def tokens(self) -> float | None:
        return None if self.tokens_per_sample is None else self.tokens_per_sample * self.expected_requests


@dataclass(frozen=True)
class Plan:
    cases: tuple[CasePlan, ...]
    alpha: float
    level: float  # alpha over the compared cases: what a case is sure to be held to in the family
    family: int  # cases in the family, at most
    update_baseline: bool
    min_drop: float = 0.10
    noisy: tuple[NoisyThreshold, ...] = ()  # thresholds an unchanged run fails more often than alpha
    variants: VariantCost | None = None  # what `run --variants` adds (a suite with variants)

    def lines(self) -> list[str]:
        """The plan as the command prints it."""
        what = "recording a baseline" if self.update_baseline else "a pull-request run"
        head = (
            f"{'case':<24} {'requests':>12} {'expected':>9} {'tokens (est.)':>14} {'baseline':>10} "
            f"{'detectable drop':>16} {'samples for min_drop':>21}"
        )
        rows = [_row(c) for c in self.cases]
        first = sum(c.requests for c in self.cases)
        expected = sum(c.expected_requests for c in self.cases)
        most = sum(c.most_requests for c in self.cases)
        known = [c.tokens for c in self.cases if c.tokens is not None]
        tokens = f", about {sum(known):,.0f} tokens" if known else ""
        total = f"{first} requests first" if most > first else f"{first} requests"
        if most > first:
            total += f", {expected:.0f} expected when nothing changed, at most {most}"
        return [
            f"plan for {what}: {len(self.cases)} cases, {total}{tokens}",
            head,
            *rows,
            "expected: the requests of an unchanged case on average, through its checks (at its baseline's "
            "agreement); requests: what it draws first, up to the most it can draw",
            f"detectable drop: the smallest fall in primary agreement a pull request catches with "
            f"{TARGET_POWER:.0%} power, at level {self.level:.4g} (alpha {self.alpha:g} over {self.family} cases)",
            f"samples for min_drop: the pull-request samples at which a fall of {self.min_drop:.2f} is caught "
            f"{TARGET_POWER:.0%} of the time at that level (none: not with {MOST_SAMPLES:,}, the baseline is too "
            "small)",
            *([FOOTNOTE] if any(c.assumed for c in self.cases) else []),  # only for a mark some row carries
            *noise_lines(self.noisy),
            *(self.variants.lines() if self.variants is not None else ()),
        ]


def noise_lines(noisy: Sequence[NoisyThreshold]) -> list[str]:
    """The thresholds inside the noise, one line each under a heading (docs/design.md §6)."""
    if not noisy:
        return []
    return [
        "thresholds inside the noise (exact, from the baseline's counts):",
        *(f"  {n.case}: {n.sentence()}" for n in noisy),
    ]


def plan_suite(
    suite: str | os.PathLike[str],
    *,
    baseline: str | os.PathLike[str] | None = None,
    update_baseline: bool = False,
    samples: int | None = None,
    accept_baseline_suite: str | None = None,
) -> Plan:
    """The library's `plan`: load the suite and its baseline (default: SUITE with .baseline.json), spend nothing."""
    checked_samples(samples, named="--samples")  # before anything is sized by it
    loaded = load_suite(suite)
    path = Path(baseline) if baseline is not None else default_baseline_path(Path(loaded.path))
    recorded = read_baseline(path)
    if recorded is not None:
        check_suite_name(recorded, loaded.suite.name, path, accept_baseline_suite)
    planned = plan_run(loaded, recorded, update_baseline=update_baseline, samples=samples)
    # Against the pull requests' size: `--samples` sizes them unless it sizes the recording.
    cases = loaded.resolved_cases()
    if samples is not None and not update_baseline:
        cases = [c.model_copy(update={"samples": samples}) for c in cases]
    return replace(planned, noisy=noisy_thresholds_of(cases, recorded, loaded.suite.regression.alpha))


def plan_run(
    loaded: LoadedSuite,
    baseline: Baseline | None,
    *,
    update_baseline: bool = False,
    samples: int | None = None,
) -> Plan:
    """What `run` (or `run --update-baseline`) on this suite will draw and can detect."""
    regression = loaded.suite.regression
    cases = loaded.resolved_cases()
    if samples is not None and not update_baseline:
        cases = [c.model_copy(update={"samples": samples}) for c in cases]
    entries = [baseline.entry_for(c) if baseline is not None else None for c in cases]
    counts = [_baseline_counts(c, e, update_baseline, samples) for c, e in zip(cases, entries, strict=True)]
    designs = [design_for(c, n) for c, (_, n, _) in zip(cases, counts, strict=True)]  # the pull requests' design
    level = bonferroni_level(regression.alpha, len(cases))
    plans = tuple(
        _case_plan(c, e, k, n, assumed, StageDesign(n, n) if update_baseline else d, level, regression.min_drop)
        for c, e, (k, n, assumed), d in zip(cases, entries, counts, designs, strict=True)
    )
    variants = price_variants(loaded, {p.id: p.requests for p in plans}, {p.id: p.tokens_per_sample for p in plans})
    return Plan(plans, regression.alpha, level, len(cases), update_baseline, regression.min_drop, variants=variants)


def _case_plan(
    case: ResolvedCase,
    entry: BaselineCase | None,
    k: int,
    n: int,
    assumed: bool,
    design: StageDesign,
    level: float,
    min_drop: float,
) -> CasePlan:
    return CasePlan(
        id=case.id,
        requests=design.next_size(0) if design.adaptive else design.first,
        expected_requests=expected_requests(k, n, design, k / n) if design.adaptive and n else design.first,
        most_requests=design.last,
        tokens_per_sample=_tokens_per_sample(entry),
        baseline_k=k,
        baseline_n=n,
        assumed=assumed,
        detectable_drop=detectable_drop(k, n, design, level, min_drop),
        samples_for_min_drop=samples_for_power(k, n, level, min_drop),
    )


def _baseline_counts(
    case: ResolvedCase, entry: BaselineCase | None, update_baseline: bool, samples: int | None
) -> tuple[int, int, bool]:
    """(k, n, assumed): the baseline's primary agreement; for a baseline still to be recorded, its
    size with the recorded rate (or ASSUMED_AGREEMENT)."""
    recorded = entry.primary if entry is not None else None
    if recorded is not None and recorded.n > 0 and not update_baseline:
        return recorded.k, recorded.n, False
    rate = recorded.value if recorded is not None and recorded.n else ASSUMED_AGREEMENT
    n = samples if update_baseline and samples is not None else baseline_size(case)
    return round(rate * n), n, True


def _tokens_per_sample(entry: BaselineCase | None) -> float | None:
    if entry is None or entry.samples <= 0:
        return None
    prompt, completion = entry.metrics.prompt_tokens, entry.metrics.completion_tokens
    if prompt is None and completion is None:
        return None
    return ((prompt or 0) + (completion or 0)) / entry.samples


def _row(c: CasePlan) -> str:
    requests = f"{c.requests}" + (f" to {c.most_requests}" if c.most_requests > c.requests else "")
    tokens = f"{c.tokens:,.0f}" if c.tokens is not None else "unknown"
    baseline = f"{c.baseline_k}/{c.baseline_n}" + ("*" if c.assumed else "")
    drop = f"{c.detectable_drop:.2f}" if c.detectable_drop is not None else "none visible"
    needed = f"{c.samples_for_min_drop:,}" if c.samples_for_min_drop is not None else "none"
    name = c.id if len(c.id) <= 24 else c.id[:23] + "…"
    return f"{name:<24} {requests:>12} {c.expected_requests:>9.1f} {tokens:>14} {baseline:>10} {drop:>16} {needed:>21}"
