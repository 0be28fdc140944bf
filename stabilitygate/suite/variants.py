"""The checks of `variants:`, `sampling.probe` and the idempotency setting that the models alone cannot make.

A case's variants join the suite's, so a name used at both levels would be two variants under one
name: exit 2 at the case's. The concurrency probe splits a fixed number of samples in two halves,
so it goes without a second stage (docs/design.md §16, "Remedies").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stabilitygate.errors import BadInput
from stabilitygate.suite.model import Case, ResolvedCase, Suite, Thresholds, Variant

#: Joins a case's id and a variant's name into the id its samples carry (a case id has no "@").
VARIANT_SEPARATOR = "@"

LineOf = Callable[[tuple[str | int, ...]], int | None]


@dataclass(frozen=True)
class ResolvedVariant:
    """A variant of one case, resolved into the case it samples (`case.id` is CASE@NAME)."""

    name: str
    case_id: str  # the case as written, which the variant is measured against
    case: ResolvedCase
    overrides: tuple[str, ...]  # the keys the variant sets, in a fixed order
    line: int | None


def variant_case_id(case_id: str, name: str) -> str:
    return f"{case_id}{VARIANT_SEPARATOR}{name}"


def check_remedies(suite: Suite, line_of: LineOf, path: str) -> None:
    """Variant names unique per case; no `max_samples` above `samples` with the probe."""
    shared = suite.variants or {}
    for i, case in enumerate(suite.cases):
        for name in case.variants or {}:
            if name in shared:
                raise BadInput(
                    f"case {case.id!r}: variant {name!r} shares its name with the suite's variant at line "
                    f"{line_of(('variants', name))} (expected a name of its own)",
                    path=path,
                    line=line_of(("cases", i, "variants", name)),
                )
    if suite.sampling.probe is not None:
        _check_fixed_size(suite, line_of, path)


def _check_fixed_size(suite: Suite, line_of: LineOf, path: str) -> None:
    sampling = suite.sampling
    if sampling.max_samples is not None and sampling.max_samples > sampling.samples:
        raise BadInput(
            "sampling.probe: the concurrency probe splits a fixed number of samples in two halves, so it goes "
            f"without a second stage (expected no sampling.max_samples above samples {sampling.samples})",
            path=path,
            line=line_of(("sampling", "max_samples")),
        )
    for i, case in enumerate(suite.cases):
        samples = case.samples or sampling.samples
        if case.max_samples is not None and case.max_samples > samples:
            raise BadInput(
                f"case {case.id!r}: max_samples {case.max_samples} with sampling.probe (the probe splits a fixed "
                f"number of samples in two halves; expected at most samples {samples})",
                path=path,
                line=line_of(("cases", i, "max_samples")),
            )


def variants_of(suite: Suite, case: Case) -> dict[str, Variant]:
    """The variants measured for `case`: the suite's, then its own, in the order the file writes them."""
    return {**(suite.variants or {}), **(case.variants or {})}


def idempotency_thresholds(thresholds: Thresholds, idempotency: str) -> Thresholds:
    """A case with one idempotency key expects exactly one completion: `max_unique: 1` unless set."""
    if idempotency != "shared" or thresholds.max_unique is not None:
        return thresholds
    return thresholds.model_copy(update={"max_unique": 1})
