"""One compared case's exact test: all its rules at once, under the null given its pooled answers.

Every rule that can fail a case (a drop of its primary agreement, the answer change or meaning drift,
a drop of its parsed share) tests the same null: the pull request answers like the baseline. So a
case has one test: each rule's statistic gets its p-value over the splits of the pooled answers
(judge/splits.py), the least of them is the case's statistic, and the case's p-value is the chance
of a split whose least p-value is at least as small (min-p: the rules' dependence is part of the
null distribution, not paid for twice). With stages, each split is weighted by the chance that a run
holding it would have reached the case's last stage (judge/stages.py): given the pooled answers and
the stage a case stopped at, every ordering that stops there is equally likely, so the p-value is
exact at every stage (docs/design.md §6, "The case's test" and "Stages").

The test also yields every value its p-value can take (its support), which the family needs to
spend alpha exactly across cases (judge/discrete.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from stabilitygate.judge.exact import Floats, Ints
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.splits import DRAWS, Splits, splits_of
from stabilitygate.judge.stats import SplitStats, Statistic, split_stats

Rule = Literal["drop", "answer", "meaning", "parsed"]
STATISTIC_OF: dict[Rule, Statistic] = {"drop": "drop", "answer": "guard", "meaning": "guard", "parsed": "parsed"}
#: Drawn splits are drawn again, ten times as many, when a p-value falls below this share of them.
REFINE_BELOW = 50 / DRAWS
_RELATIVE = 1e-12  # p-values this close are one value: sums of the same weights in another order


@dataclass(frozen=True)
class RuleP:
    """One rule of a case: its own p-value, and the case's p-value were that the least of the rules'."""

    own: float
    case: float


@dataclass(frozen=True)
class CaseTest:
    """The case's p-value, every value it can take under the null, and each rule's p-values."""

    p_value: float
    support: tuple[float, ...]  # ascending
    rules: Mapping[Rule, RuleP]

    @classmethod
    def untestable(cls, rules: Sequence[Rule]) -> CaseTest:
        """Nothing can differ (one answer pooled, an empty run): p = 1 whatever the split."""
        return cls(1.0, (1.0,), {rule: RuleP(1.0, 1.0) for rule in rules})


#: P(a run holding this split reaches the case's last stage), by the baseline's modal count in either run.
Survival = Callable[[Ints, Ints], Floats]


def case_test(pool: Pool, rules: Sequence[Rule], survival: Survival | None = None) -> CaseTest:
    """The case's exact conditional test over `rules` (docs/design.md §6, "The case's test")."""
    if not rules or pool.n_baseline == 0 or pool.n_current == 0 or sum(1 for n in pool.pooled if n) < 2:
        return CaseTest.untestable(rules)
    splits = splits_of(pool.pooled, pool.observed, pool.n_baseline)
    test = _weighed(splits, pool, rules, survival)
    if test is not None and not splits.exact and test.p_value < REFINE_BELOW:
        refined = splits_of(pool.pooled, pool.observed, pool.n_baseline, draws=10 * DRAWS)
        test = _weighed(refined, pool, rules, survival)
    return test if test is not None else CaseTest.untestable(rules)


def _weighed(splits: Splits, pool: Pool, rules: Sequence[Rule], survival: Survival | None) -> CaseTest | None:
    stats = split_stats(pool.pooled, splits.baseline)
    weight = splits.weight if survival is None else splits.weight * survival(stats.modal_before, stats.modal_now)
    total = float(weight.sum())
    if total <= 0.0:
        return None
    weight = weight / total
    own = {rule: _tail(stats, STATISTIC_OF[rule], weight) for rule in rules}
    least = np.min(np.vstack(list(own.values())), axis=0)
    case_p = _at_most(least, weight)  # P(least p <= each split's least p)
    observed = splits.observed
    rule_ps = {
        rule: RuleP(float(p[observed]), _chance_at_most(least, weight, float(p[observed]))) for rule, p in own.items()
    }
    # The observed value belongs to the support even if the checks' model gave its split no weight.
    reachable = (weight > 0) | (np.arange(weight.size) == observed)
    support = tuple(float(v) for v in np.unique(case_p[reachable]))
    return CaseTest(float(case_p[observed]), support, rule_ps)


def _tail(stats: SplitStats, statistic: Statistic, weight: Floats) -> Floats:
    """Each split's p-value for `statistic`: the weight of the splits at least as extreme."""
    values = stats.of(statistic)
    unique, inverse = np.unique(values, return_inverse=True)
    by_value = np.bincount(inverse, weights=weight, minlength=unique.size)
    tail = np.cumsum(by_value[::-1])[::-1]
    result: Floats = np.minimum(tail[inverse], 1.0)
    return result


def _at_most(values: Floats, weight: Floats) -> Floats:
    """For each split, the weight of the splits whose value is at most its value (close values tie)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    # Close values are one value: each run of them takes the run's last cumulative weight.
    breaks = np.flatnonzero(np.diff(ordered) > _RELATIVE * np.maximum(ordered[1:], 1e-300))
    run_end = np.append(breaks, ordered.size - 1)
    cumulative = np.cumsum(weight[order])
    run_of = np.searchsorted(run_end, np.arange(ordered.size))
    out = np.empty_like(values)
    out[order] = np.minimum(cumulative[run_end[run_of]], 1.0)
    return out


def _chance_at_most(values: Floats, weight: Floats, bound: float) -> float:
    return min(1.0, float(weight[values <= bound * (1 + _RELATIVE)].sum()))
