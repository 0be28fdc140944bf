"""The fork-safe side (`comment-from`): the comment rendered from a report another job wrote.

In the fork-safe pair every byte of that report comes from the pull request's own run, which the
pull request's code controls: a fork can make it say "pass". The privileged side cannot measure
again, so the comment says where its figures come from and links that run (docs/action.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from stabilitygate.errors import BadInput
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.event import pull_request_number, repository, triggering_run_id
from stabilitygate.github.inputs import ActionInputs
from stabilitygate.github.reporting import error_outputs, fallback_summary, post_comment, write_summary
from stabilitygate.report.markdown import MAX_CHARS, render_markdown
from stabilitygate.report.read import read_report
from stabilitygate.secrets import Secrets
from stabilitygate.version import TOOL_NAME

DEFAULT_SERVER_URL = "https://github.com"


def comment_from_report(inputs: ActionInputs, environ: Mapping[str, str], secrets: Secrets) -> int:
    """Render the comment from a report.json with the gate's own renderer, say whose figures they are, post it.

    The report is untrusted (a fork's job wrote it): it is validated like any input file, and every
    text in it goes through the same escaping as a live run's. A bad one posts nothing (exit 2).
    """
    source = inputs.comment_from or ""
    try:
        report = read_report(source)
    except BadInput as exc:
        wc.error(str(exc), title=f"{TOOL_NAME}: not a report")
        write_summary(fallback_summary(exc.exit_code, [f"{TOOL_NAME}: error: {exc}"], secrets), environ)
        error_outputs(environ)
        return exc.exit_code
    note = provenance_note(environ)
    markdown = with_note(render_markdown(report, max_chars=MAX_CHARS - len(note)), note)
    write_summary(markdown, environ)
    if pull_request_number(environ) is None and inputs.pr_number is None:
        wc.warning("no pull request to comment on: set input `pr-number` (the event names none)", title=TOOL_NAME)
    elif inputs.comment:
        post_comment(markdown, inputs, environ)
    return report.exit_code


def provenance_note(environ: Mapping[str, str]) -> str:
    """A quoted paragraph: these figures are the pull request's own run's claim, and which run that was."""
    url = triggering_run_url(environ)
    run = f"[its own run]({url})" if url else "its own run (this workflow's event names none)"
    return (
        f"> [!NOTE]\n> The figures below were reported by {run}, not measured here: the pull request's "
        "code ran there and can change them. Read them as that run's report, and check the run.\n"
    )


def triggering_run_url(environ: Mapping[str, str]) -> str | None:
    """The link to the run whose report this is: from the `workflow_run` event GitHub wrote."""
    run_id, repo = triggering_run_id(environ), repository(environ)
    if run_id is None or repo is None:
        return None
    server = environ.get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL
    if not server.startswith(("https://", "http://")) or any(ch.isspace() or ch in "()<>" for ch in server):
        server = DEFAULT_SERVER_URL
    return f"{server.rstrip('/')}/{repo[0]}/{repo[1]}/actions/runs/{run_id}"


def with_note(markdown: str, note: str) -> str:
    """The note right after the comment's first line, the hidden marker that finds it again."""
    marker, _, rest = markdown.partition("\n")
    return f"{marker}\n{note}\n{rest}"
