"""Absolute thresholds checked against the noise: would an unchanged run fail this one too often?

A `min_agreement` of 0.60 on a case whose baseline agrees 40/60 fails a good share of runs in which
nothing changed. Given the baseline's counts, the chance is exact: a run of N samples that answers as
the baseline did draws its counts from the multinomial of the baseline's rates, and each threshold
this module covers bounds one count of it (docs/design.md §6, "Thresholds against the noise"):

- `min_parsed`, `min_accuracy`, `min_schema_valid`: the samples that parse, are correct, meet the
  schema, one binomial count each; `max_sample_errors`: the failed samples, a binomial count too;
- `min_agreement`, `min_mode_share`: the most common answer (or completion) of the run, the largest
  of the counts of the baseline's kept answers (its top five), the rest of the samples (other
  answers, parse failures) free. With one kept answer this is the binomial.

`max_unique`, `max_semantic_clusters` and `min_cosine` are left out: a count of distinct texts or
meanings, or a least cosine, has no model in the baseline's counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.judge.exact import log_poisson, poisson_pmf
from stabilitygate.judge.thresholds import below
from stabilitygate.plain import round_float
from stabilitygate.suite.model import ResolvedCase, ThresholdName
from stabilitygate.typed_json import Count, Number, Share

__all__ = ["NoisyThreshold", "chance_all_below", "noisy_thresholds", "noisy_thresholds_of"]

#: Values offered for a `min_*` threshold are on this grid: what a suite file would write.
GRID = 100
#: Above this many operations the convolutions go through the FFT (a suite of 100,000 samples).
DIRECT_CONVOLUTION = 20_000_000


@dataclass(frozen=True)
class NoisyThreshold:
    """A threshold an unchanged run fails more often than `alpha`, and the loosest value that holds."""

    case: str
    threshold: ThresholdName
    limit: Number
    baseline_k: Count  # the baseline's count behind it (the most common answer, the parsed samples, ...)
    baseline_n: Count
    samples: Count  # N of the unchanged run
    fail_chance: Share
    holds: Number  # the value that fails at most `alpha` of the time
    alpha: Share

    def sentence(self) -> str:
        """'min_agreement 0.60 against a baseline of 40/60: an unchanged run of 12 fails it 37% of the
        time; 0.41 holds at alpha 0.05'."""
        counted = COUNTED.get(self.threshold, "")
        if self.threshold.startswith("max_"):
            limit, holds, verb = f"{self.limit:g}", f"{self.holds:g}", "exceeds"
        else:
            limit, holds, verb = f"{self.limit:.2f}", f"{self.holds:.2f}", "fails"
        return (
            f"{self.threshold} {limit} against a baseline of {self.baseline_k}/{self.baseline_n}{counted}: "
            f"an unchanged run of {self.samples} {verb} it {_percent(self.fail_chance)} of the time; "
            f"{holds} holds at alpha {self.alpha:g}"
        )


COUNTED = {"min_parsed": " parsed", "min_accuracy": " correct", "min_schema_valid": " meeting the schema",
           "max_sample_errors": " failed samples"}  # fmt: skip


def _percent(chance: float) -> str:
    return f"{chance:.0%}" if chance >= 0.01 else f"{chance * 100:.2g}%"


@dataclass(frozen=True)
class _Bound:
    """One threshold as a bound on a count: the categories whose largest count it bounds, at their
    baseline rates (the rest of the samples free)."""

    name: ThresholdName
    limit: float
    rates: tuple[float, ...]
    k: int
    n: int


# --- which thresholds, at which counts -------------------------------------------------------------


def noisy_thresholds_of(
    cases: Iterable[ResolvedCase], baseline: Baseline | None, alpha: float
) -> tuple[NoisyThreshold, ...]:
    """Every case's noisy thresholds against its baseline entry (one of the case's definition only)."""
    if baseline is None:
        return ()
    found: list[NoisyThreshold] = []
    for case in cases:
        entry = baseline.entry_for(case)
        if entry is not None:
            found.extend(noisy_thresholds(case, entry, alpha))
    return tuple(found)


def noisy_thresholds(case: ResolvedCase, entry: BaselineCase, alpha: float) -> list[NoisyThreshold]:
    """The thresholds of `case` that a run of `case.samples` answering as `entry` fails more often than alpha."""
    found = []
    for bound in _min_bounds(case, entry):
        noisy = _check_min(case.id, bound, case.samples, alpha)
        if noisy is not None:
            found.append(noisy)
    errors = _max_sample_errors(case, entry, alpha)
    return [*found, *([errors] if errors is not None else [])]


def _min_bounds(case: ResolvedCase, entry: BaselineCase) -> list[_Bound]:
    t, n, metrics = case.thresholds, entry.samples, entry.metrics
    if n <= 0:
        return []
    bounds: list[_Bound] = []

    def add(name: ThresholdName, limit: float | None, counts: Sequence[int]) -> None:
        if limit is not None and limit > 0 and counts:
            bounds.append(_Bound(name, limit, tuple(c / n for c in counts), max(counts), n))

    if entry.primary is not None and entry.primary.n == n:
        add("min_agreement", t.min_agreement, _kept_counts(entry))
    add("min_mode_share", t.min_mode_share, [c.count for c in entry.completions])
    if case.answer is not None and metrics.parse_failures is not None:
        add("min_parsed", t.parsed_floor, [n - metrics.parse_failures])
    if metrics.accuracy is not None:
        add("min_accuracy", t.min_accuracy, [round(metrics.accuracy * n)])
    if metrics.schema_valid_share is not None:
        add("min_schema_valid", t.min_schema_valid, [round(metrics.schema_valid_share * n)])
    return bounds


def _kept_counts(entry: BaselineCase) -> list[int]:
    """The counts behind the primary agreement: the kept answers with a parser, the kept completions
    for exact text, else (meanings: only the largest cluster is kept) the primary count alone."""
    assert entry.primary is not None
    metric = entry.primary.metric
    if metric == "parsed_agreement" and entry.answers:
        return [a.count for a in entry.answers]
    if metric == "mode_share" and entry.completions:
        return [c.count for c in entry.completions]
    return [entry.primary.k]


def _check_min(case_id: str, bound: _Bound, samples: int, alpha: float) -> NoisyThreshold | None:
    """A `min_*` threshold: the run fails it when its largest count, as a share of `samples`, is below."""

    def chance(limit: float) -> float:
        return chance_all_below(samples, bound.rates, _least_passing(samples, limit))

    fails = chance(bound.limit)
    if fails <= alpha:
        return None
    grid = [v / GRID for v in range(math.floor(bound.limit * GRID + 1e-9) + 1)]  # 0.00 .. the limit
    holds = grid[_last_true(len(grid), lambda i: chance(grid[i]) <= alpha)]
    return NoisyThreshold(case_id, bound.name, bound.limit, bound.k, bound.n, samples, fails, holds, alpha)


def _least_passing(samples: int, limit: float) -> int:
    """The least count whose share meets `limit`, as thresholds.py judges shares (rounded, with slack)."""
    return _last_true(samples + 2, lambda k: k == 0 or below(round_float((k - 1) / samples), limit))


def _max_sample_errors(case: ResolvedCase, entry: BaselineCase, alpha: float) -> NoisyThreshold | None:
    """`max_sample_errors` (default half of N): the run is `error` when more samples fail than it allows."""
    drawn = entry.samples + entry.sample_errors
    if entry.sample_errors == 0 or drawn <= 0:
        return None
    samples, rate = case.samples, (entry.sample_errors / drawn,)
    allowed = case.thresholds.max_sample_errors
    limit = samples // 2 if allowed is None else allowed

    def chance(c: int) -> float:
        return 1.0 - chance_all_below(samples, rate, c + 1)

    fails = chance(limit)
    if fails <= alpha:
        return None
    holds = _first_holding(limit + 1, samples, lambda c: chance(c) <= alpha)
    return NoisyThreshold(case.id, "max_sample_errors", limit, entry.sample_errors, drawn, samples, fails, holds, alpha)


def _first_holding(low: int, high: int, holds: Callable[[int], bool]) -> int:
    """The least c in [low, high] for which `holds` (monotone: false then true) is true; `high` holds."""
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle + 1, high)
    return low


def _last_true(size: int, true: Callable[[int], bool]) -> int:
    """The last index of 0..size-1 where `true` (monotone: true then false, true at 0) holds."""
    low, high = 0, size - 1
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if true(middle) else (low, middle - 1)
    return low


# --- the exact chance ------------------------------------------------------------------------------


def chance_all_below(n: int, rates: Sequence[float], t: int) -> float:
    """P(every count X_i < t) for (X_1, ..., X_m, rest) ~ Multinomial(n; rates, 1 - sum(rates)).

    Exact by Poissonization: independent Y_i ~ Poisson(n r_i) conditioned on their sum being n are
    the multinomial, so the chance is P(all Y_i < t, sum = n) / P(Poisson(n) = n), a convolution of
    the truncated Poisson probabilities evaluated at n.
    """
    if t <= 0:
        return 0.0
    if t > n:
        return 1.0
    rest = max(0.0, 1.0 - sum(rates))
    total = poisson_pmf(n * rest, n)  # the free rest, any count
    for rate in rates:
        total = _convolve(total, poisson_pmf(n * rate, t - 1))[: n + 1]
    at_n = float(total[n]) if len(total) > n else 0.0
    return min(1.0, max(0.0, at_n / math.exp(log_poisson(n, n))))


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) * len(b) <= DIRECT_CONVOLUTION:
        direct: np.ndarray = np.convolve(a, b)
        return direct
    size = len(a) + len(b) - 1
    spectrum = np.fft.rfft(a, size) * np.fft.rfft(b, size)
    result: np.ndarray = np.clip(np.fft.irfft(spectrum, size), 0.0, None)
    return result
