"""Why samples failed, said once: the most common cause among a case's (or a run's) failed samples.

A failed sample's error is the provider's typed error as the sampler wrote it (its kind, the HTTP
status, the provider's message, redacted before it was stored). A sample whose retries the request
budget cut short carries the sampler's note besides; the cause is the error without the note, so the
budget running out never hides what the requests were failing with (docs/design.md §3, "Causes").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from stabilitygate.results import ErrorCount

#: What the sampler adds to a sample's error when the budget ran out before its next retry.
BUDGET_NOTE = " (request budget exhausted)"
#: A cause is shown on one line, this long at most.
CAUSE_CHARS = 240
#: A text that holds this much of the cause's message already says it.
TOLD_CHARS = 60


@dataclass(frozen=True)
class Cause:
    """The most common error of some failed samples, and how many of them it accounts for."""

    error: str  # one line, cut to CAUSE_CHARS
    count: int  # failed samples with this error
    failed: int  # failed samples in all

    def sentence(self) -> str:
        """What follows "5 samples failed": 'most often (3 of them): http_500: HTTP 500 ...', or 'all with: ...'."""
        if self.count == self.failed:
            return f"{'with' if self.failed == 1 else 'all with'}: {self.error}"
        return f"most often ({self.count} of them): {self.error}"

    def told_in(self, text: str) -> bool:
        """Whether `text` already says this cause: its message (the error after its kind, as the sampler
        wrote it), or the start of it, appears there (a reason quotes it, cut or not)."""
        message = self.error.split(": ", 1)[-1]
        return message[:TOLD_CHARS] in " ".join(text.split())

    def said(self) -> str:
        """The whole sentence: '5 samples failed, most often (3 of them): ...'."""
        return f"{self.failed} sample{'' if self.failed == 1 else 's'} failed, {self.sentence()}"


def most_common_cause(errors: Iterable[ErrorCount]) -> Cause | None:
    """The cause most failed samples share (the first written on a tie); None when none failed."""
    counts: Counter[str] = Counter()
    for row in errors:
        counts[_one_line(row.error.removesuffix(BUDGET_NOTE))] += row.count
    if not counts:
        return None
    error, count = counts.most_common(1)[0]
    return Cause(error, count, sum(counts.values()))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= CAUSE_CHARS else line[: CAUSE_CHARS - 1] + "…"
