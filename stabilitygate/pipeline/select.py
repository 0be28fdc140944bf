"""Which cases a run takes: `--case ID...` and `--shard K/N`."""

from __future__ import annotations

from collections.abc import Sequence

from stabilitygate.errors import BadInput
from stabilitygate.pipeline.options import Shard
from stabilitygate.suite.model import ResolvedCase


def select_cases(
    cases: Sequence[ResolvedCase], case_ids: Sequence[str] = (), shard: Shard | None = None
) -> list[ResolvedCase]:
    chosen = list(cases)
    if case_ids:
        known = {c.id for c in cases}
        unknown = [cid for cid in case_ids if cid not in known]
        if unknown:
            raise BadInput(f"--case {unknown[0]!r}: no such case in the suite (cases: {', '.join(sorted(known))})")
        wanted = set(case_ids)
        chosen = [c for c in chosen if c.id in wanted]
    if shard is not None:
        assignment = assign_shards(chosen, shard.count)
        chosen = [c for c in chosen if assignment[c.id] == shard.index]
    return chosen


def assign_shards(cases: Sequence[ResolvedCase], count: int) -> dict[str, int]:
    """The 1-based shard of each case: greedy longest-job-first over samples, so shards cost alike.

    Depends only on the cases' ids and sample counts, so every job of a CI matrix agrees on it.
    """
    load = [0] * count
    assignment: dict[str, int] = {}
    for case in sorted(cases, key=lambda c: (-c.samples, c.id)):
        target = min(range(count), key=lambda k: (load[k], k))
        load[target] += case.samples
        assignment[case.id] = target + 1
    return assignment
