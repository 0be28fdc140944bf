"""What the action reports once the gate has run: annotations, job summary, step outputs, PR comment.

All of it is reporting: a failure here becomes a warning, never a different verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from stabilitygate import TOOL_NAME
from stabilitygate.errors import EXIT_BAD_INPUT
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.comments import (
    DEFAULT_API_URL,
    CommentError,
    CommentForbidden,
    GitHubClient,
    upsert_sticky_comment,
)
from stabilitygate.github.event import pull_request_number, repository
from stabilitygate.github.gate import GateFiles
from stabilitygate.github.inputs import ActionInputs

FAILING_VERDICTS = ("fail", "regressed", "error")
MAX_ANNOTATIONS_PER_LEVEL = 10  # GitHub shows at most 10 of each level per step
FORK_HINT = (
    "This is expected on a pull request from a fork: its GITHUB_TOKEN is read-only, whatever the "
    "workflow's permissions say. The job summary was written. To comment on fork pull requests, use the "
    "fork-safe pair of workflows from the README (docs/workflows/stability-fork-safe.yml uploads the "
    "report, docs/workflows/stability-comment.yml posts it from a workflow_run)."
)


class SuiteInfo(NamedTuple):
    """What the Action learns from the suite before the gate runs (annotations point at case lines)."""

    shown: str  # the path as annotations need it, from the repository root
    lines: dict[str, int]  # case id -> its line in the suite
    name: str


def read_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def failing_cases(report: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if report is None:
        return []
    cases = report.get("cases")
    if not isinstance(cases, list):
        return []
    return [c for c in cases if isinstance(c, dict) and c.get("verdict") in FAILING_VERDICTS]


def _annotate(failing: Sequence[Mapping[str, Any]], code: int, fail_on: str, suite: SuiteInfo | None) -> None:
    shown, lines = (suite.shown, suite.lines) if suite else (None, {})
    emitted = {"error": 0, "warning": 0}
    for case in failing:
        verdict = str(case.get("verdict"))
        gated = code != 0 and (verdict != "regressed" or fail_on == "regression")
        level = "error" if gated else "warning"
        if emitted[level] >= MAX_ANNOTATIONS_PER_LEVEL:
            continue
        emitted[level] += 1
        line = case.get("line") if isinstance(case.get("line"), int) else lines.get(str(case.get("id")))
        reasons = [str(r) for r in case.get("reasons") or []]
        wc.annotation(
            level,
            "; ".join(reasons) or f"the case's verdict is {verdict}",
            file=shown,
            line=line if shown else None,
            title=f"{TOOL_NAME}: case {case.get('id')} {verdict}",
        )
    hidden = len(failing) - sum(emitted.values())
    if hidden > 0:
        wc.annotation("notice", f"{hidden} more cases did not pass; the job summary lists them all")


def _redact(text: str, hidden: Sequence[str]) -> str:
    for value in sorted(hidden, key=len, reverse=True):
        text = text.replace(value, "***")
    return text


def fallback_summary(code: int, tail: Sequence[str], hidden: Sequence[str]) -> str:
    """A summary for a run that wrote no Markdown report (bad input, could not measure)."""
    what = "bad input" if code == EXIT_BAD_INPUT else "could not measure"
    lines = [line for line in tail if line.strip() and not line.startswith("::")][-15:]
    body = _redact("\n".join(lines), hidden)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}\n{body}\n{fence}\n" if body else ""
    return (
        f"## {TOOL_NAME}: error\n\nThe gate stopped with exit code {code} ({what}); no report was written.\n\n{block}"
    )


def report_run(
    inputs: ActionInputs,
    environ: Mapping[str, str],
    files: GateFiles,
    code: int,
    tail: Sequence[str],
    suite: SuiteInfo | None,
    hidden: Sequence[str],
) -> None:
    """Everything a whole run (or a merge) reports: annotations, summary, outputs, then the comment."""
    report = read_report(files.report_json)
    failing = failing_cases(report)
    _annotate(failing, code, inputs.fail_on, suite)
    markdown = files.markdown.read_text(encoding="utf-8") if files.markdown.is_file() else None
    write_summary(markdown if markdown is not None else fallback_summary(code, tail, hidden), environ)
    set_outputs(files, report, markdown, failing, environ)
    if markdown is not None and inputs.comment:
        _comment(markdown, inputs, environ)


def write_summary(text: str, environ: Mapping[str, str]) -> None:
    try:
        wc.append_step_summary(text, environ)
    except OSError as exc:
        wc.warning(f"could not write the job summary: {exc}", title=TOOL_NAME)


def set_outputs(
    files: GateFiles,
    report: Mapping[str, Any] | None,
    markdown: str | None,
    failing: Sequence[Mapping[str, Any]],
    environ: Mapping[str, str],
) -> None:
    verdict = report.get("verdict") if report else None
    try:
        wc.set_outputs(
            {
                "verdict": str(verdict) if verdict in ("pass", "fail", "error") else "error",
                "report-json": files.shown(files.report_json) if report is not None else "",
                "report-markdown": files.shown(files.markdown) if markdown is not None else "",
                "failed-cases": ",".join(str(c.get("id")) for c in failing),
            },
            environ,
        )
    except OSError as exc:
        wc.warning(f"could not write the step outputs: {exc}", title=TOOL_NAME)


def _comment(markdown: str, inputs: ActionInputs, environ: Mapping[str, str]) -> None:
    number = pull_request_number(environ)
    repo = repository(environ)
    if number is None or repo is None:
        return
    if not inputs.github_token:
        wc.warning("no github-token: the pull-request comment was skipped", title=TOOL_NAME)
        return
    api_url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    try:
        with GitHubClient(inputs.github_token, api_url=api_url) as client:
            result = upsert_sticky_comment(client, repo, number, markdown)
    except CommentForbidden as exc:
        wc.warning(f"could not comment on pull request #{number} ({exc}). {FORK_HINT}", title=TOOL_NAME)
        return
    except (CommentError, ValueError) as exc:
        wc.warning(f"could not comment on pull request #{number}: {exc}", title=TOOL_NAME)
        return
    print(f"{TOOL_NAME}: {result.action} the comment on pull request #{number}", flush=True)
