"""Which pull request, if any, the workflow run is about, and which run triggered it (from the event
payload the runner wrote)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import JsonValue

# Events whose payload carries the pull request itself.
PULL_REQUEST_EVENTS = frozenset(
    {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}
)


def _load_event(environ: Mapping[str, str]) -> dict[str, JsonValue] | None:
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            payload = json.load(handle)
    except (OSError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def pull_request_number(environ: Mapping[str, str]) -> int | None:
    """The PR number for pull_request(_target) events and comments on a PR; None otherwise.

    A missing or unreadable payload is not an error: the gate then simply does not comment.
    """
    name = environ.get("GITHUB_EVENT_NAME", "")
    if name not in PULL_REQUEST_EVENTS and name != "issue_comment":
        return None
    event = _load_event(environ)
    if event is None:
        return None
    if name == "issue_comment":
        issue = event.get("issue")
        # An issue comment is on a pull request only when the issue carries a `pull_request` link.
        if not isinstance(issue, dict) or not issue.get("pull_request"):
            return None
        return _positive_int(issue.get("number"))
    pull_request = event.get("pull_request")
    if isinstance(pull_request, dict) and _positive_int(pull_request.get("number")):
        return _positive_int(pull_request.get("number"))
    return _positive_int(event.get("number"))


def triggering_run_id(environ: Mapping[str, str]) -> int | None:
    """For a `workflow_run` event, the id of the run that triggered this one (GitHub wrote it, not the run)."""
    if environ.get("GITHUB_EVENT_NAME") != "workflow_run":
        return None
    event = _load_event(environ)
    run = event.get("workflow_run") if event is not None else None
    return _positive_int(run.get("id")) if isinstance(run, dict) else None


def repository(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(owner, name) from GITHUB_REPOSITORY, or None when it is missing or malformed."""
    owner, _, name = environ.get("GITHUB_REPOSITORY", "").partition("/")
    if not owner or not name or "/" in name:
        return None
    return owner, name
