"""How GitHub's refusals become errors: `CommentError` with a hint that names the likely cause.

The hint is what turns a bare "HTTP 403" into advice (a fork's read-only token, a token without
write access, an unknown repository, bad credentials, a spent rate limit); `comment_warning` is the
one line the action warns with.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

#: What GitHub answers (403) when an installation token lacks the permission, as on a fork's pull request.
NOT_ACCESSIBLE = "Resource not accessible by integration"

FORK_HINT = (
    "This is expected on a pull request from a fork: its GITHUB_TOKEN is read-only, whatever the "
    "workflow's permissions say (elsewhere, give the job `permissions: pull-requests: write`). The job "
    "summary was written. To comment on fork pull requests, use the fork-safe pair of workflows from the "
    "README (docs/workflows/stability-fork-safe.yml uploads the report, docs/workflows/stability-comment.yml "
    "posts it from a workflow_run)."
)
BAD_CREDENTIALS_HINT = "GitHub refused the github-token: it is expired, revoked or not a GitHub token."
PERMISSION_HINT = "The token may not comment here: it needs write access to the repository's pull requests."
NOT_FOUND_HINT = (
    "GitHub answers 404 where the token cannot see the repository or the pull request: "
    "check that the token is one for this repository."
)
RATE_LIMIT_HINT = "The token's GitHub API rate limit is spent for now; a later run posts the comment."


class CommentError(Exception):
    """The comment could not be written; the gate's verdict stands and the action warns.

    `hint` names the likely cause in a sentence ("" when there is nothing to add to the message).
    """

    def __init__(self, message: str, *, status: int | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.hint = hint


class CommentForbidden(CommentError):
    """GitHub's 403 "Resource not accessible by integration": a read-only token, as on a fork's pull request."""

    def __init__(self, message: str, *, status: int = 403) -> None:
        super().__init__(message, status=status, hint=FORK_HINT)


class RateLimited(CommentError):
    """GitHub's rate limit, still in force after the waits the client allows itself."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message, status=status, hint=RATE_LIMIT_HINT)


def comment_warning(number: int, exc: CommentError) -> str:
    """The action's one-line warning for a comment that could not be written: what failed, and why."""
    if exc.hint:
        return f"could not comment on pull request #{number} ({exc}). {exc.hint}"
    return f"could not comment on pull request #{number}: {exc}"


def github_message(response: httpx.Response) -> str:
    """GitHub's `message`, on one line; "" when the answer carries none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(message.split())[:300] if isinstance(message, str) else ""


def shown_url(url: str) -> str:
    """The URL as messages show it: its path and query, without the host."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def http_error(method: str, url: str, response: httpx.Response) -> CommentError:
    """The error for a refused request, carrying the hint that fits GitHub's answer."""
    status = response.status_code
    detail = github_message(response)
    message = f"{method} {shown_url(url)} answered HTTP {status}" + (f": {detail}" if detail else "")
    if status == 403 and NOT_ACCESSIBLE.casefold() in detail.casefold():
        return CommentForbidden(message, status=status)
    hints = {401: BAD_CREDENTIALS_HINT, 403: PERMISSION_HINT, 404: NOT_FOUND_HINT}
    return CommentError(message, status=status, hint=hints.get(status, ""))
