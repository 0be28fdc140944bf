"""What the action reports once the gate has run: annotations, job summary, step outputs, PR comment.

All of it is reporting: a failure here becomes a warning, never a different verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from stabilitygate.errors import EXIT_BAD_INPUT
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.api_client import DEFAULT_API_URL, GitHubClient
from stabilitygate.github.api_errors import CommentError, comment_warning
from stabilitygate.github.comments import upsert_sticky_comment
from stabilitygate.github.event import pull_request_number, repository
from stabilitygate.github.gate import GateFiles, GateOutcome
from stabilitygate.github.inputs import ActionInputs
from stabilitygate.judge.gate import FAILING
from stabilitygate.report.markdown import render_markdown
from stabilitygate.report.model import CaseResult, Report
from stabilitygate.report.safe_text import fence
from stabilitygate.secrets import Secrets, redact
from stabilitygate.version import TOOL_NAME

MAX_ANNOTATIONS_PER_LEVEL = 10  # GitHub shows at most 10 of each level per step
#: Warnings for cases stop one short of the limit: the comment's own warning (fork, permissions) must show.
MAX_CASE_WARNINGS = MAX_ANNOTATIONS_PER_LEVEL - 1


class SuiteInfo(NamedTuple):
    """What the Action learns from the suite before the gate runs (annotations point at case lines)."""

    shown: str  # the path as annotations need it, from the repository root
    lines: dict[str, int]  # case id -> its line in the suite
    name: str


def _annotate(failing: Sequence[CaseResult], code: int, fail_on: str, suite: SuiteInfo | None) -> None:
    shown, lines = (suite.shown, suite.lines) if suite else (None, {})
    limits = {"error": MAX_ANNOTATIONS_PER_LEVEL, "warning": MAX_CASE_WARNINGS}
    emitted = {"error": 0, "warning": 0}
    for case in failing:
        # An error annotation only for what failed the job; a warn or an ungated verdict is a warning.
        gated = code != 0 and (case.verdict == "error" or case.verdict in FAILING.get(fail_on, frozenset()))
        level = "error" if gated else "warning"
        if emitted[level] >= limits[level]:
            continue
        emitted[level] += 1
        line = case.line if case.line is not None else lines.get(case.id)
        wc.annotation(
            level,
            "; ".join(case.reasons) or f"the case's verdict is {case.verdict}",
            file=shown,
            line=line if shown else None,
            title=f"{TOOL_NAME}: case {case.id} {case.verdict}",
        )
    hidden = len(failing) - sum(emitted.values())
    if hidden > 0:
        wc.annotation("notice", f"{hidden} more cases did not pass; the job summary lists them all")


def fallback_summary(code: int, tail: Sequence[str], secrets: Secrets) -> str:
    """A summary for a run that wrote no Markdown report (bad input, could not measure)."""
    what = "bad input" if code == EXIT_BAD_INPUT else "could not measure"
    lines = [line for line in tail if line.strip() and not line.startswith("::")][-15:]
    body = redact("\n".join(lines), secrets)
    block = f"{fence(body, info='')}\n" if body else ""
    return (
        f"## {TOOL_NAME}: error\n\nThe gate stopped with exit code {code} ({what}); no report was written.\n\n{block}"
    )


def cache_line(report: Report) -> str:
    """The job summary's word on the embedding cache (never in the comment: it changes run to run)."""
    facts = report.run.embedding
    if facts is None or facts.texts_from_cache is None:
        return ""
    total, cached = facts.texts_embedded, facts.texts_from_cache
    model = "no model was loaded" if cached == total else f"{total - cached} embedded by the model"
    return f"\n\n<sub>Embedding cache: {cached} of {total} distinct texts came from the cache; {model}.</sub>\n"


def report_run(
    inputs: ActionInputs,
    environ: Mapping[str, str],
    files: GateFiles,
    outcome: GateOutcome,
    suite: SuiteInfo | None,
    secrets: Secrets,
) -> None:
    """Everything a whole run (or a merge) reports: annotations, summary, outputs, then the comment."""
    report = outcome.report
    failing = report.failing_cases if report is not None else ()
    _annotate(report.noted_cases if report is not None else (), outcome.code, inputs.fail_on, suite)
    annotate_failure(outcome, secrets)
    markdown = render_markdown(report) if report is not None else None
    if report is not None and markdown is not None:
        write_summary(markdown + cache_line(report), environ)
    else:
        write_summary(fallback_summary(outcome.code, outcome.tail, secrets), environ)
    set_outputs(files, report, failing, environ)
    if markdown is not None and inputs.comment:
        post_comment(markdown, inputs, environ)


def annotate_failure(outcome: GateOutcome, secrets: Secrets) -> None:
    """The error annotation of a gate that stopped without a report (its log lines are not commands)."""
    if outcome.report is None and outcome.failure is not None:
        title = f"{TOOL_NAME}: bad input" if outcome.code == EXIT_BAD_INPUT else TOOL_NAME
        wc.error(redact(outcome.failure.removeprefix("error: "), secrets), title=title)


def error_outputs(environ: Mapping[str, str]) -> None:
    """The step outputs of a job that stopped before the gate could report: `verdict=error`."""
    try:
        wc.set_outputs(
            {"verdict": "error", "outcome": "error", "report-json": "", "report-markdown": "", "failed-cases": ""},
            environ,
        )
    except OSError as exc:
        wc.warning(f"could not write the step outputs: {exc}", title=TOOL_NAME)


def write_summary(text: str, environ: Mapping[str, str]) -> None:
    try:
        wc.append_step_summary(text, environ)
    except OSError as exc:
        wc.warning(f"could not write the job summary: {exc}", title=TOOL_NAME)


def set_outputs(
    files: GateFiles, report: Report | None, failing: Sequence[CaseResult], environ: Mapping[str, str]
) -> None:
    try:
        wc.set_outputs(
            {
                "verdict": report.verdict if report is not None else "error",
                "outcome": report.outcome if report is not None else "error",
                "report-json": files.shown(files.report_json) if report is not None else "",
                "report-markdown": files.shown(files.markdown) if report is not None else "",
                "failed-cases": ",".join(c.id for c in failing),
            },
            environ,
        )
    except OSError as exc:
        wc.warning(f"could not write the step outputs: {exc}", title=TOOL_NAME)


def post_comment(markdown: str, inputs: ActionInputs, environ: Mapping[str, str]) -> None:
    """Create or update the sticky comment; any failure is a warning naming its cause."""
    number = inputs.pr_number or pull_request_number(environ)
    repo = repository(environ)
    if number is None or repo is None:
        return
    if not inputs.github_token:
        wc.warning("no github-token: the pull-request comment was skipped", title=TOOL_NAME)
        return
    api_url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    graphql_url = environ.get("GITHUB_GRAPHQL_URL") or None
    try:
        with GitHubClient(inputs.github_token, api_url=api_url, graphql_url=graphql_url) as client:
            result = upsert_sticky_comment(client, repo, number, markdown)
    except CommentError as exc:
        wc.warning(comment_warning(number, exc), title=TOOL_NAME)
        return
    except ValueError as exc:  # a body without the marker line
        wc.warning(f"could not comment on pull request #{number}: {exc}", title=TOOL_NAME)
        return
    print(f"{TOOL_NAME}: {result.action} the comment on pull request #{number}", flush=True)
    if result.duplicates_left:
        wc.warning(
            f"pull request #{number} has {len(result.duplicates_left)} more comments of this gate that it could "
            "neither delete nor minimize",
            title=TOOL_NAME,
        )
