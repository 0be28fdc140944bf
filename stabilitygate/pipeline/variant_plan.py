"""What `run --variants` adds to a run's cost, for `stabilitygate plan` (docs/design.md §16, "Variants").

Each variant of a case draws as many samples as the case; its tokens are estimated from the case's
own (the baseline's tokens per sample), since a variant has no baseline of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stabilitygate.suite.load import LoadedSuite


@dataclass(frozen=True)
class VariantCost:
    """The variants' requests and estimated tokens over the run's cases."""

    names: tuple[str, ...]  # the variants' names, in the order the file names them
    runs: int  # (case, variant) pairs
    cases: int  # cases with at least one variant
    requests: int
    tokens: float | None  # None: no case with variants has token counts in the baseline

    def lines(self) -> list[str]:
        tokens = f", about {self.tokens:,.0f} tokens" if self.tokens is not None else ""
        return [
            f"with --variants: {self.runs} variant runs ({', '.join(self.names)}) over {self.cases} "
            f"case{'' if self.cases == 1 else 's'}, "
            f"{self.requests} more requests{tokens} (estimated from each case's own); reported, never judged"
        ]


def price_variants(
    loaded: LoadedSuite, requests: Mapping[str, int], tokens_per_sample: Mapping[str, float | None]
) -> VariantCost | None:
    """The cost of the cases' variants, each drawing the case's `requests`; None when the suite has none."""
    counted = {cid: len(loaded.variants.get(cid, ())) for cid in requests}
    counted = {cid: n for cid, n in counted.items() if n}
    if not counted:
        return None
    names = dict.fromkeys(v.name for cid in counted for v in loaded.variants[cid])
    known = [n * requests[cid] * per for cid, n in counted.items() if (per := tokens_per_sample.get(cid)) is not None]
    return VariantCost(
        names=tuple(names),
        runs=sum(counted.values()),
        cases=len(counted),
        requests=sum(n * requests[cid] for cid, n in counted.items()),
        tokens=sum(known) if known else None,
    )
