"""What a run found and, said apart, what the job does about it under the chosen `--fail-on`.

The console's verdict line, the comment's heading and the job summary say both in these words
(docs/design.md §3, "What a run says"): the finding is the cases that did not pass, counted; the
job's outcome is the report's exit code, with the `--fail-on` that decided it, so a run that found a
regression under `--fail-on never` says "1 regressed; --fail-on never: the job passes", never "fail".
"""

from __future__ import annotations

from collections.abc import Collection

from stabilitygate.errors import EXIT_CANNOT_MEASURE, EXIT_FAIL
from stabilitygate.judge.wording import counted
from stabilitygate.report.model import Report
from stabilitygate.results import VerdictName
from stabilitygate.sampling.causes import most_common_cause

#: The summary's counts that are findings (a case a reader should look at), as the heading words them.
FINDINGS = (("failed", "failed", "failed"), ("regressed", "regressed", "regressed"), ("warned", "warned", "warned"),
            ("errors", "error", "errors"))  # fmt: skip
EMOJI_CLEAN, EMOJI_FOUND, EMOJI_FAILS, EMOJI_CANNOT = "✅", "⚠️", "❌", "🛑"


def findings(report: Report) -> list[str]:
    """'1 failed', '2 regressed', ...: the cases worth a look, counted; empty when every case passed."""
    s = report.summary
    return [counted(getattr(s, key), one, more) for key, one, more in FINDINGS if getattr(s, key)]


def clean(report: Report) -> bool:
    """Nothing found and the job passes: the one case where 'pass' says everything."""
    return not findings(report) and report.exit_code == 0


def job_sentence(report: Report) -> str:
    """Whether the job fails, and what decided it: the --fail-on setting, a recording, or no measurement."""
    code, fail_on = report.exit_code, report.run.fail_on
    if code == EXIT_CANNOT_MEASURE:
        return "could not measure: the job fails (exit 3)"
    if report.run.baseline.status == "updated":  # a recording is not gated; a case it refused fails it
        refused = len(report.run.baseline.not_recorded)
        return f"{counted(refused, 'case')} not recorded: the job fails" if code == EXIT_FAIL else (
            "recorded, not gated: the job passes")  # fmt: skip
    outcome = "fails" if code == EXIT_FAIL else "passes"
    return f"--fail-on {fail_on}: the job {outcome}" if findings(report) or code else f"the job {outcome}"


def headline(report: Report) -> str:
    """The comment's heading after 'LLM stability: ': 'pass', else the findings and the job's outcome."""
    if clean(report):
        return "pass"
    found = findings(report)
    return f"{', '.join(found)}; {job_sentence(report)}" if found else job_sentence(report)


def headline_emoji(report: Report) -> str:
    """✅ nothing found, ⚠️ found but the job passes, ❌ the job fails, 🛑 could not measure."""
    if report.exit_code == EXIT_CANNOT_MEASURE:
        return EMOJI_CANNOT
    if report.exit_code == EXIT_FAIL:
        return EMOJI_FAILS
    return EMOJI_CLEAN if clean(report) else EMOJI_FOUND


def run_cause_line(report: Report) -> str | None:
    """When the request budget ran out: that sentence, with what the failed samples of the run most
    often failed with (retries of failing requests are what spends a budget)."""
    sampling = report.run.sampling
    if sampling is None or not sampling.budget_exhausted:
        return None
    cause = most_common_cause(row for case in report.cases for row in case.errors)
    told = f"; {cause.said()}" if cause is not None else ""
    return f"The request budget (max_requests) ran out before every sample was drawn{told}."


#: Cases that passed with failed samples are named this many at most (the report has every one).
QUIET_CAUSES_SHOWN = 5


def quiet_causes(report: Report, quiet: Collection[VerdictName]) -> list[str]:
    """Why the failed samples of cases shown no further (their verdict in `quiet`) failed, one line each:
    a case that passes with failed samples still says what its requests failed with."""
    lines = []
    for case in report.cases:
        cause = most_common_cause(case.errors) if case.verdict in quiet else None
        if cause is not None:
            lines.append(f"Failed samples of {case.id} ({case.verdict}): {cause.said()}.")
    more = len(lines) - QUIET_CAUSES_SHOWN
    return lines[:QUIET_CAUSES_SHOWN] + (
        [f"Failed samples in {more} more cases: the report JSON has them."] if more > 0 else []
    )
