"""How many samples a case draws: for a baseline, for a pull request's first stage, at most in all.

`samples` is the pull request's first stage; `baseline_samples` (default BASELINE_FACTOR x samples)
is what `--update-baseline` draws, since a baseline is paid once per intended change and its N buys
power on every pull request after it; `max_samples` is the most a compared case draws when its checks
leave it inconclusive (default MAX_FACTOR x samples, 50 for `samples: 20`: the design that meets the
power targets at no more than `samples` requests per case on average; `max_samples: samples` turns
the second stage off; docs/design.md §6, "Stages", gives the figures).
"""

from __future__ import annotations

from collections.abc import Callable

from stabilitygate.errors import BadInput
from stabilitygate.metrics import MAX_SAMPLES
from stabilitygate.suite.model import ResolvedCase, Suite

BASELINE_FACTOR = 5
MAX_FACTOR = 2.5

LineOf = Callable[[tuple[str | int, ...]], int | None]


def baseline_size(case: ResolvedCase) -> int:
    """Samples `--update-baseline` draws for the case (without `--samples`); the default multiple stops
    at `MAX_SAMPLES`, the most a report or baseline holds (docs/design.md §15)."""
    return max(case.baseline_samples or min(BASELINE_FACTOR * case.samples, MAX_SAMPLES), case.samples)


def max_size(case: ResolvedCase) -> int:
    """The most samples a pull-request run draws for the case, second stage included."""
    return max(case.max_samples or min(int(MAX_FACTOR * case.samples), MAX_SAMPLES), case.samples)


def checked_samples(value: int | None, *, named: str) -> int | None:
    """A count of samples given outside the suite (`--samples`, the Action's `samples`), held to the
    bounds the suite's own `samples` has, before anything is drawn or allocated; BadInput naming `named`."""
    if value is not None and not 2 <= value <= MAX_SAMPLES:
        more = f", more than {MAX_SAMPLES:,} (the most the suite's `samples` may be)" if value > MAX_SAMPLES else ""
        raise BadInput(f"{named}: {value:,}{more}: expected 2 to {MAX_SAMPLES:,}")
    return value


def check_sizes(suite: Suite, line_of: LineOf, path: str) -> None:
    """baseline_samples and max_samples of at least the samples they apply to: else exit 2 at the key."""
    sampling = suite.sampling
    for key in ("baseline_samples", "max_samples"):
        value = getattr(sampling, key)
        if value is not None and value < sampling.samples:
            raise BadInput(
                f"sampling.{key}: {value} is below sampling.samples {sampling.samples} (expected at least that)",
                path=path,
                line=line_of(("sampling", key)),
            )
    for i, case in enumerate(suite.cases):
        samples = case.samples or sampling.samples
        for key in ("baseline_samples", "max_samples"):
            own = getattr(case, key)
            value = own if own is not None else getattr(sampling, key)
            if value is None or value >= samples:
                continue
            where = ("cases", i, key) if own is not None else ("cases", i, "samples")
            setting = f"cases[{i}].{key}" if own is not None else f"sampling.{key}"
            raise BadInput(
                f"case {case.id!r}: {setting} {value} is below its samples {samples} (expected at least {samples})",
                path=path,
                line=line_of(where),
            )
