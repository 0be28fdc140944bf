"""The sticky pull-request comment: created once, then updated in place on every later run.

Which comments are the gate's own is `github/comment_thread.py`'s to say (the token's account, the
marker line, not minimized). Two runs that create the comment at the same moment each list again
afterwards: the oldest comment stays and takes the run's body, every younger one is deleted (or
minimized where deleting is refused), so exactly one is left. A failure never leaves half a
comment: a write either lands whole or the previous comment stays as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import httpx
from pydantic import TypeAdapter

from stabilitygate.github.api_client import GitHubClient, decode_json, validate_answer
from stabilitygate.github.api_errors import CommentError, RateLimited, shown_url
from stabilitygate.github.comment_thread import Comment, PullRequest, own_marked_comments
from stabilitygate.github.token_identity import token_login

#: GitHub refuses issue comments longer than this many characters.
MAX_COMMENT_CHARS = 65536
MAX_VANISHED = 2  # comments deleted between our listing and our PATCH before the gate gives up
TRUNCATED_NOTE = "\n\n_(truncated: the comment reached GitHub's 65,536-character limit)_\n"

MINIMIZE_MUTATION = (
    "mutation StabilitygateMinimize($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: DUPLICATE}) "
    "{ minimizedComment { isMinimized } } }"
)

_COMMENT = TypeAdapter(Comment)


@dataclass(frozen=True)
class CommentResult:
    """What the upsert did; `duplicates_left` are extra comments of the gate it could neither delete nor hide."""

    action: Literal["created", "updated"]
    comment_id: int
    url: str | None
    duplicates_left: tuple[int, ...] = ()


def fit_comment(body: str) -> str:
    """The body within GitHub's limit: cut, with a note that says so, when it is longer."""
    if len(body) <= MAX_COMMENT_CHARS:
        return body
    return body[: MAX_COMMENT_CHARS - len(TRUNCATED_NOTE)] + TRUNCATED_NOTE


def _written(response: httpx.Response, what: str) -> Comment:
    return validate_answer(_COMMENT, decode_json(response, what), what)


def _update(client: GitHubClient, pr: PullRequest, comment: Comment, body: str) -> Comment | None:
    """The comment with its new body; None when it vanished (deleted since it was listed)."""
    url = pr.comment_url(comment.id)
    try:
        response = client.request("PATCH", url, json={"body": body})
    except CommentError as exc:
        if exc.status == 404:
            return None
        raise
    return _written(response, f"PATCH {shown_url(url)}")


def _create(client: GitHubClient, pr: PullRequest, body: str) -> Comment:
    """POST once: a failed POST may have created the comment, so the caller lists before trying again."""
    response = client.request("POST", pr.comments_url, json={"body": body}, retry=False)
    return _written(response, f"POST {shown_url(pr.comments_url)}")


def _answer_lost(exc: CommentError) -> bool:
    """A POST that failed this way may have landed: a network error, a 5xx, an answer that is not a comment."""
    return not isinstance(exc, RateLimited) and (exc.status is None or exc.status >= 500)


def _remove(client: GitHubClient, pr: PullRequest, comment: Comment) -> bool:
    """Delete a duplicate of the gate's comment, or minimize it where deleting is refused; False if neither."""
    try:
        client.request("DELETE", pr.comment_url(comment.id))
        return True
    except CommentError as exc:
        if exc.status == 404:  # the other run removed it first
            return True
    if comment.node_id is None:
        return False
    try:
        client.graphql(MINIMIZE_MUTATION, {"id": comment.node_id})
    except CommentError:
        return False
    return True


def _settle(
    client: GitHubClient,
    pr: PullRequest,
    action: Literal["created", "updated"],
    kept: Comment,
    duplicates: Iterable[Comment],
) -> CommentResult:
    """The result, once every duplicate is removed (the kept comment is written first, so one always shows)."""
    extra = {c.id: c for c in duplicates if c.id != kept.id}
    left = tuple(cid for cid, comment in sorted(extra.items()) if not _remove(client, pr, comment))
    return CommentResult(action, kept.id, kept.html_url, left)


def _after_create(
    client: GitHubClient, pr: PullRequest, marker: str, login: str, body: str, created: Comment
) -> CommentResult:
    """List again: a run that created its comment at the same moment leaves two, and the oldest stays."""
    try:
        ours = own_marked_comments(client, pr, marker, login)
    except CommentError:  # posted; a duplicate, if any, is cleaned up by the next run
        return CommentResult("created", created.id, created.html_url)
    older = [c for c in ours if c.id < created.id]
    if not older:
        return _settle(client, pr, "created", created, ours)
    try:
        kept = _update(client, pr, older[0], body)
    except CommentError:  # the older one cannot take this body: keep ours, leave that one
        return CommentResult("created", created.id, created.html_url, (older[0].id,))
    if kept is None:  # the older one vanished meanwhile: ours stays
        return _settle(client, pr, "created", created, ours)
    return _settle(client, pr, "updated", kept, [*ours, created])


def upsert_sticky_comment(
    client: GitHubClient, repository: tuple[str, str], number: int, body: str, *, login: str | None = None
) -> CommentResult:
    """Update the gate's own comment that starts with the body's first line, or create it.

    `login` is the token's account when the caller knows it; otherwise GitHub is asked. A comment
    deleted between the listing and the PATCH is created anew; a failed POST is not retried blindly
    (the comment may have been created before the error), the list is read again first.
    """
    marker = body.splitlines()[0] if body else ""
    if not marker.strip():
        raise ValueError("the comment body must start with a marker line")
    body = fit_comment(body)
    pr = PullRequest(client.api_url, *repository, number)
    me = login or token_login(client)
    vanished = lost = 0
    while True:
        ours = own_marked_comments(client, pr, marker, me)
        if ours:
            updated = _update(client, pr, ours[0], body)
            if updated is not None:
                return _settle(client, pr, "updated", updated, ours[1:])
            vanished += 1
            if vanished > MAX_VANISHED:
                raise CommentError(f"comment {ours[0].id} answers 404 to every update", status=404)
            continue
        try:
            created = _create(client, pr, body)
        except CommentError as exc:
            if not _answer_lost(exc) or lost >= client.retries:
                raise
            client.back_off(lost)
            lost += 1
            continue
        return _after_create(client, pr, marker, me, body, created)
