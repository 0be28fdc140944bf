"""The sticky pull-request comment: created once, then updated in place on every later run.

The gate owns a comment only when all three hold: the token's own account wrote it (for
`GITHUB_TOKEN` that is `github-actions[bot]`), its body starts with the hidden marker line
(`<!-- stabilitygate:SUITE -->`), and nobody minimized it. A person who pastes the marker into a
comment of their own does not hand that comment to the gate.

The comments come from the REST API, following every `Link: rel="next"` page. The token's account
comes from GraphQL `viewer` (REST `GET /user` refuses installation tokens, so it is only the
fallback), and whether a comment is minimized only GraphQL says (`IssueComment.isMinimized`).

Two runs that create the comment at the same moment each list again afterwards: the oldest comment
stays and takes the run's body, every younger one is deleted (or minimized where deleting is
refused), so exactly one is left. A failure never leaves half a comment: a write either lands
whole or the previous comment stays as it was.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from stabilitygate import TOOL_NAME, __version__

DEFAULT_API_URL = "https://api.github.com"
#: GitHub refuses issue comments longer than this many characters.
MAX_COMMENT_CHARS = 65536
MAX_PAGES = 200  # 20,000 comments: far beyond any real PR; stops a server that links in a loop
MAX_VANISHED = 2  # comments deleted between our listing and our PATCH before the gate gives up
NODES_PER_QUERY = 100  # GraphQL `nodes(ids:)` takes at most 100 ids
TRUNCATED_NOTE = "\n\n_(truncated: the comment reached GitHub's 65,536-character limit)_\n"

#: GitHub's rule for a secondary rate limit without `retry-after`: wait at least a minute, then longer.
SECONDARY_LIMIT_WAIT_S = 60.0
#: Added to a wait until `x-ratelimit-reset`: the runner's clock and GitHub's may differ a little.
RESET_MARGIN_S = 1.0
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

VIEWER_QUERY = "query StabilitygateViewer { viewer { login } }"
MINIMIZED_QUERY = (
    "query StabilitygateMinimized($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id isMinimized } } }"
)
MINIMIZE_MUTATION = (
    "mutation StabilitygateMinimize($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: DUPLICATE}) "
    "{ minimizedComment { isMinimized } } }"
)

Sleep = Callable[[float], None]
Clock = Callable[[], float]


# ---- errors, and the one line the action warns with


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


# ---- what GitHub answers, parsed at the edge


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True)


class Account(_Answer):
    login: str


class Comment(_Answer):
    """An issue comment as the REST API lists it: the fields the gate reads."""

    id: int
    node_id: str | None = None
    body: str | None = None
    user: Account | None = None
    html_url: str | None = None

    def is_marked_by(self, login: str, marker: str) -> bool:
        """Written by `login` (GitHub logins ignore case) and starting with the marker line."""
        author = self.user.login if self.user is not None else None
        return author is not None and author.casefold() == login.casefold() and (self.body or "").startswith(marker)


class _GraphQLError(_Answer):
    message: str = ""
    type: str | None = None


class _GraphQLAnswer(_Answer):
    data: dict[str, Any] | None = None
    errors: list[_GraphQLError] | None = None


class _Viewer(_Answer):
    viewer: Account


class _MinimizedState(_Answer):
    id: str | None = None  # absent for an id that is not an IssueComment
    is_minimized: bool = Field(default=False, alias="isMinimized")


class _Nodes(_Answer):
    nodes: list[_MinimizedState | None]


_COMMENT = TypeAdapter(Comment)
_COMMENT_PAGE = TypeAdapter(list[Comment])
_ACCOUNT = TypeAdapter(Account)
_GRAPHQL_ANSWER = TypeAdapter(_GraphQLAnswer)
_VIEWER = TypeAdapter(_Viewer)
_NODES = TypeAdapter(_Nodes)
_Parsed = TypeVar("_Parsed")


def _decode(response: httpx.Response, what: str) -> object:
    try:
        return response.json()
    except ValueError as exc:
        raise CommentError(f"{what}: the answer is not JSON") from exc


def _validate(adapter: TypeAdapter[_Parsed], data: object, what: str) -> _Parsed:
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise CommentError(f"{what}: unexpected answer ({where}: {first['msg']})") from exc


def _message(response: httpx.Response) -> str:
    """GitHub's `message`, on one line; "" when the answer carries none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(message.split())[:300] if isinstance(message, str) else ""


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def http_error(method: str, url: str, response: httpx.Response) -> CommentError:
    """The error for a refused request, carrying the hint that fits GitHub's answer."""
    status = response.status_code
    detail = _message(response)
    message = f"{method} {_shown(url)} answered HTTP {status}" + (f": {detail}" if detail else "")
    if status == 403 and NOT_ACCESSIBLE.casefold() in detail.casefold():
        return CommentForbidden(message, status=status)
    hints = {401: BAD_CREDENTIALS_HINT, 403: PERMISSION_HINT, 404: NOT_FOUND_HINT}
    return CommentError(message, status=status, hint=hints.get(status, ""))


# ---- rate limits, as GitHub's REST documentation says to handle them


@dataclass(frozen=True)
class RateLimitWait:
    """How long a rate-limited request must wait; `exact` when GitHub named the time itself."""

    seconds: float
    exact: bool


def rate_limit_wait(response: httpx.Response, retry: int, now: float) -> RateLimitWait | None:
    """The wait before sending a rate-limited request again (its `retry`-th retry); None if it is no rate limit.

    GitHub's rules: wait `retry-after` seconds; else, with `x-ratelimit-remaining: 0`, until the
    `x-ratelimit-reset` epoch second; else (a secondary limit) at least a minute, doubling each retry.
    """
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    after = _retry_after_s(headers.get("retry-after"), now)
    if after is not None:
        return RateLimitWait(after, exact=True)
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return RateLimitWait(max(int(reset) - now, 0.0) + RESET_MARGIN_S, exact=True)
    if response.status_code == 429 or "rate limit" in _message(response).casefold():
        return RateLimitWait(SECONDARY_LIMIT_WAIT_S * 2**retry, exact=False)
    return None


def _retry_after_s(value: str | None, now: float) -> float | None:
    """`retry-after` in seconds: GitHub sends a number; HTTP also allows a date."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - now, 0.0)


# ---- the client


def graphql_url_for(api_url: str) -> str:
    """GitHub's GraphQL endpoint beside its REST API: `API/graphql`, or `HOST/api/graphql` on Enterprise Server."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


class GitHubClient:
    """A small synchronous REST and GraphQL client: auth headers, timeouts, retries and rate limits.

    Every wait goes through `sleep`, and `clock` (epoch seconds) dates `x-ratelimit-reset`, so
    that tests can run the waits without waiting.
    """

    def __init__(
        self,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        graphql_url: str | None = None,
        retries: int = 2,
        backoff_s: float = 1.0,
        rate_limit_retries: int = 2,
        max_wait_s: float = 300.0,
        timeout_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.graphql_url = graphql_url or graphql_url_for(self.api_url)
        self.retries = retries
        self.backoff_s = backoff_s
        self.rate_limit_retries = rate_limit_retries
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.clock = clock
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
            follow_redirects=False,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"{TOOL_NAME}/{__version__}",
            },
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, method: str, url: str, *, json: Any = None, retry: bool = True) -> httpx.Response:
        """Send one request; return its answer below 400, or raise CommentError.

        A rate-limited request was refused unprocessed, so it is always waited out and sent again,
        within `rate_limit_retries` and `max_wait_s`. 5xx answers and transport errors are retried
        only with `retry`: a failed POST may still have been processed.
        """
        failures = limited = 0
        while True:
            try:
                response = self._client.request(method, url, json=json)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                if not retry or failures >= self.retries:
                    raise CommentError(f"{method} {_shown(url)}: {type(exc).__name__}: {exc}") from exc
                self.back_off(failures)
                failures += 1
                continue
            if response.status_code < 400:
                return response
            wait = rate_limit_wait(response, limited, self.clock())
            if wait is not None:
                self._wait_out(wait, limited, http_error(method, url, response))
                limited += 1
                continue
            if retry and response.status_code >= 500 and failures < self.retries:
                self.back_off(failures)
                failures += 1
                continue
            raise http_error(method, url, response)

    def graphql(self, query: str, variables: Mapping[str, object] | None = None) -> dict[str, Any]:
        """The `data` of a GraphQL answer; GraphQL's own errors (HTTP 200) raise CommentError too."""
        response = self.request("POST", self.graphql_url, json={"query": query, "variables": dict(variables or {})})
        answer = _validate(_GRAPHQL_ANSWER, _decode(response, "GraphQL"), "GraphQL")
        if answer.errors:
            raise _graphql_error(answer.errors, response.status_code)
        return answer.data or {}

    def back_off(self, attempt: int) -> None:
        """The pause before retrying after a server error: `backoff_s`, doubling each attempt."""
        self.sleep(self.backoff_s * 2**attempt)

    def _wait_out(self, wait: RateLimitWait, limited: int, refused: CommentError) -> None:
        """Sleep through a rate limit, or raise RateLimited when the retries or the wait are too many."""
        seconds = wait.seconds if wait.exact else min(wait.seconds, self.max_wait_s)
        if limited >= self.rate_limit_retries or seconds > self.max_wait_s:
            status = refused.status if refused.status is not None else 429
            raise RateLimited(f"{refused}; GitHub asks to wait {seconds:.0f} s", status=status) from refused
        self.sleep(seconds)


def _graphql_error(errors: Sequence[_GraphQLError], status: int) -> CommentError:
    text = "; ".join(" ".join(e.message.split()) for e in errors)[:300] or "no message"
    message = f"POST /graphql answered {text}"
    if any(e.type == "RATE_LIMITED" for e in errors):
        return RateLimited(message, status=status)
    if any(NOT_ACCESSIBLE.casefold() in e.message.casefold() for e in errors):
        return CommentForbidden(message)
    return CommentError(message, status=status)


# ---- reading the thread


@dataclass(frozen=True)
class PullRequest:
    """Where a pull request's comments live in the REST API."""

    api_url: str
    owner: str
    repo: str
    number: int

    @property
    def _issues(self) -> str:
        return f"{self.api_url}/repos/{quote(self.owner, safe='')}/{quote(self.repo, safe='')}/issues"

    @property
    def comments_url(self) -> str:
        return f"{self._issues}/{self.number}/comments"

    def comment_url(self, comment_id: int) -> str:
        return f"{self._issues}/comments/{comment_id}"


def _same_origin(url: str, api_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(api_url)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def list_comments(client: GitHubClient, pr: PullRequest) -> list[Comment]:
    """Every comment on the pull request, in GitHub's order (oldest first), reading every page."""
    found: list[Comment] = []
    url: str | None = pr.comments_url + "?per_page=100"
    for _ in range(MAX_PAGES):
        if url is None:
            return found
        response = client.request("GET", url)
        page: list[Comment] = _validate(_COMMENT_PAGE, _decode(response, f"GET {_shown(url)}"), f"GET {_shown(url)}")
        found += page
        url = response.links.get("next", {}).get("url")
        # The token goes only to the API it was given for, whatever a Link header says.
        if url is not None and not _same_origin(url, client.api_url):
            raise CommentError("the comment list links to another host; not following it")
    raise CommentError(f"more than {MAX_PAGES} pages of comments; giving up the search")


def token_login(client: GitHubClient) -> str:
    """The login of the account the token acts as, as REST names comment authors (`github-actions[bot]`)."""
    try:
        return _validate(_VIEWER, client.graphql(VIEWER_QUERY), "GraphQL viewer").viewer.login
    except RateLimited:
        raise
    except CommentError as graphql_failure:
        status = graphql_failure.status
        if status is None or status >= 500 or status == 401:  # GET /user would fare no better
            raise
        try:
            response = client.request("GET", f"{client.api_url}/user")
            return _validate(_ACCOUNT, _decode(response, "GET /user"), "GET /user").login
        except CommentError as exc:
            # GET /user refuses installation tokens: GraphQL's failure is the one that names the cause.
            raise CommentError(
                f"could not learn which account the token is ({graphql_failure}; {exc})",
                status=graphql_failure.status,
                hint=graphql_failure.hint,
            ) from exc


def minimized_node_ids(client: GitHubClient, node_ids: Sequence[str]) -> set[str]:
    """Which of these comments are minimized: REST does not say, GraphQL's `isMinimized` does."""
    hidden: set[str] = set()
    for start in range(0, len(node_ids), NODES_PER_QUERY):
        chunk = list(node_ids[start : start + NODES_PER_QUERY])
        data = client.graphql(MINIMIZED_QUERY, {"ids": chunk})
        nodes = _validate(_NODES, data, "GraphQL nodes").nodes
        hidden |= {node.id for node in nodes if node is not None and node.id is not None and node.is_minimized}
    return hidden


def own_marked_comments(client: GitHubClient, pr: PullRequest, marker: str, login: str) -> list[Comment]:
    """The comments the gate may own, oldest first: written by `login`, starting with `marker`, not minimized."""
    marked = [c for c in list_comments(client, pr) if c.is_marked_by(login, marker)]
    if not marked:
        return []
    hidden = minimized_node_ids(client, [c.node_id for c in marked if c.node_id])
    return sorted((c for c in marked if c.node_id not in hidden), key=lambda c: c.id)


# ---- writing it


@dataclass(frozen=True)
class CommentResult:
    """What the upsert did; `duplicates_left` are extra comments of the gate it could neither delete nor hide."""

    action: Literal["created", "updated"]
    comment_id: int
    url: str | None
    duplicates_left: tuple[int, ...] = ()


def fit_comment(body: str) -> str:
    if len(body) <= MAX_COMMENT_CHARS:
        return body
    return body[: MAX_COMMENT_CHARS - len(TRUNCATED_NOTE)] + TRUNCATED_NOTE


def _written(response: httpx.Response, what: str) -> Comment:
    return _validate(_COMMENT, _decode(response, what), what)


def _update(client: GitHubClient, pr: PullRequest, comment: Comment, body: str) -> Comment | None:
    """The comment with its new body; None when it vanished (deleted since it was listed)."""
    url = pr.comment_url(comment.id)
    try:
        response = client.request("PATCH", url, json={"body": body})
    except CommentError as exc:
        if exc.status == 404:
            return None
        raise
    return _written(response, f"PATCH {_shown(url)}")


def _create(client: GitHubClient, pr: PullRequest, body: str) -> Comment:
    """POST once: a failed POST may have created the comment, so the caller lists before trying again."""
    response = client.request("POST", pr.comments_url, json={"body": body}, retry=False)
    return _written(response, f"POST {_shown(pr.comments_url)}")


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
