"""From case verdicts to the run's verdict and the process exit code (docs/design.md, "Command line")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from stabilitygate.errors import EXIT_CANNOT_MEASURE, EXIT_FAIL, EXIT_PASS, BadInput
from stabilitygate.judge.fail_on import FAIL_ON_CHOICES
from stabilitygate.results import CaseVerdict
from stabilitygate.typed_json import Count

RunVerdict = Literal["pass", "fail", "error"]
#: The verdicts each `fail_on` setting fails on.
FAILING: dict[str, frozenset[str]] = {
    "regression": frozenset({"fail", "regressed"}),
    "fail": frozenset({"fail"}),
    "warn": frozenset({"fail", "regressed", "warn"}),
    "never": frozenset(),
}


def run_verdict(verdicts: Sequence[CaseVerdict], *, fatal: bool) -> RunVerdict:
    """error when the run could not measure; fail when a case failed or regressed; else pass."""
    names = {v.verdict for v in verdicts}
    if fatal or "error" in names:
        return "error"
    if names & {"fail", "regressed"}:
        return "fail"
    return "pass"


def exit_code(verdicts: Sequence[CaseVerdict], fail_on: str, *, could_not_measure: bool) -> int:
    """3 could not measure; 1 when a case fails the gate as `fail_on` selects; else 0."""
    if fail_on not in FAIL_ON_CHOICES:
        raise BadInput(f"--fail-on expects one of {', '.join(FAIL_ON_CHOICES)}, not {fail_on!r}")
    names = {v.verdict for v in verdicts}
    if could_not_measure or "error" in names:
        return EXIT_CANNOT_MEASURE
    return EXIT_FAIL if names & FAILING[fail_on] else EXIT_PASS


@dataclass(frozen=True, kw_only=True)
class VerdictCounts:
    """The summary's counts of cases by verdict (the report's `Summary` has these fields)."""

    cases: Count
    passed: Count
    failed: Count
    regressed: Count
    warned: Count = 0  # a report older than warnings has none
    new: Count
    errors: Count


def verdict_counts(verdicts: Sequence[CaseVerdict]) -> VerdictCounts:
    """The summary's counts: cases, passed, failed, regressed, warned, new, errors."""
    counts = Counter(v.verdict for v in verdicts)
    return VerdictCounts(
        cases=len(verdicts),
        passed=counts["pass"],
        failed=counts["fail"],
        regressed=counts["regressed"],
        warned=counts["warn"],
        new=counts["new"],
        errors=counts["error"],
    )
