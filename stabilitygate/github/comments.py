"""The sticky pull-request comment: created once, then updated in place on every later run.

The comment is found by its first line, a hidden marker (`<!-- stabilitygate:SUITE -->`), among
all of the PR's issue comments, following the `Link: rel="next"` pages of the REST API.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import httpx

from stabilitygate import TOOL_NAME, __version__

DEFAULT_API_URL = "https://api.github.com"
#: GitHub refuses issue comments longer than this many characters.
MAX_COMMENT_CHARS = 65536
MAX_PAGES = 200  # 20,000 comments: far beyond any real PR; stops a server that links in a loop
TRUNCATED_NOTE = "\n\n_(truncated: the comment reached GitHub's 65,536-character limit)_\n"


class CommentError(Exception):
    """The comment could not be written; the gate's verdict stands and the action warns."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class CommentForbidden(CommentError):
    """The token may not comment (403/404): typically a pull request from a fork, whose token is read-only."""


@dataclass(frozen=True)
class CommentResult:
    action: Literal["created", "updated"]
    comment_id: int
    url: str | None


class GitHubClient:
    """A small synchronous REST client: auth headers, timeouts and a couple of retries on 5xx."""

    def __init__(
        self,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        retries: int = 2,
        backoff_s: float = 1.0,
        timeout_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.retries = retries
        self.backoff_s = backoff_s
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
        """Send one request; retry 5xx, 429 and transport errors when `retry`; raise CommentError on failure."""
        attempts = 1 + (self.retries if retry else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._client.request(method, url, json=json)
            except httpx.TransportError as exc:
                if last:
                    raise CommentError(f"{method} {_shown(url)}: {type(exc).__name__}: {exc}") from None
                self.pause(attempt, None)
                continue
            if response.status_code < 400:
                return response
            if (response.status_code >= 500 or response.status_code == 429) and not last:
                self.pause(attempt, response.headers.get("Retry-After"))
                continue
            raise _http_error(method, url, response)
        raise AssertionError("unreachable")

    def pause(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff_s * (2**attempt)
        if retry_after and retry_after.isdigit():
            delay = max(delay, min(float(retry_after), 30.0))
        time.sleep(delay)


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _http_error(method: str, url: str, response: httpx.Response) -> CommentError:
    detail = ""
    try:
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            detail = f": {body['message'][:300]}"
    except ValueError:
        pass
    message = f"{method} {_shown(url)} answered HTTP {response.status_code}{detail}"
    if response.status_code in (403, 404):
        return CommentForbidden(message, status=response.status_code)
    return CommentError(message, status=response.status_code)


def _same_origin(url: str, api_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(api_url)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def _comments_url(client: GitHubClient, owner: str, repo: str, number: int) -> str:
    return f"{client.api_url}/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/issues/{number}/comments"


def find_marked_comment(client: GitHubClient, owner: str, repo: str, number: int, marker: str) -> dict[str, Any] | None:
    """The first comment on the PR whose body starts with `marker`, reading every page."""
    url: str | None = _comments_url(client, owner, repo, number) + "?per_page=100"
    for _ in range(MAX_PAGES):
        if url is None:
            return None
        response = client.request("GET", url)
        try:
            page = response.json()
        except ValueError:
            raise CommentError(f"GET {_shown(url)}: the answer is not JSON") from None
        if not isinstance(page, list):
            raise CommentError(f"GET {_shown(url)}: expected a list of comments")
        for comment in page:
            body = comment.get("body") if isinstance(comment, dict) else None
            if isinstance(body, str) and body.startswith(marker):
                return comment
        url = response.links.get("next", {}).get("url")
        # The token goes only to the API it was given for, whatever a Link header says.
        if url is not None and not _same_origin(url, client.api_url):
            raise CommentError("the comment list links to another host; not following it")
    raise CommentError(f"more than {MAX_PAGES} pages of comments; giving up the search")


def fit_comment(body: str) -> str:
    if len(body) <= MAX_COMMENT_CHARS:
        return body
    return body[: MAX_COMMENT_CHARS - len(TRUNCATED_NOTE)] + TRUNCATED_NOTE


def upsert_sticky_comment(client: GitHubClient, repository: tuple[str, str], number: int, body: str) -> CommentResult:
    """Update the PR's comment that starts with the body's first line, or create it.

    A failed POST is not retried blindly: the comment may have been created before the error,
    so the list is searched again first, which keeps the comment unique.
    """
    owner, repo = repository
    marker = body.splitlines()[0] if body else ""
    if not marker.strip():
        raise ValueError("the comment body must start with a marker line")
    body = fit_comment(body)
    base = f"{client.api_url}/repos/{quote(owner, safe='')}/{quote(repo, safe='')}/issues"
    for attempt in range(1 + client.retries):
        existing = find_marked_comment(client, owner, repo, number, marker)
        if existing is not None:
            comment_id = existing.get("id")
            if not isinstance(comment_id, int):
                raise CommentError("the marked comment has no numeric id")
            response = client.request("PATCH", f"{base}/comments/{comment_id}", json={"body": body})
            return _result("updated", response)
        try:
            response = client.request("POST", f"{base}/{number}/comments", json={"body": body}, retry=False)
        except CommentForbidden:
            raise
        except CommentError as exc:
            transient = exc.status is None or exc.status >= 500 or exc.status == 429
            if not transient or attempt == client.retries:
                raise
            client.pause(attempt, None)
            continue
        return _result("created", response)
    raise AssertionError("unreachable")


def _result(action: Literal["created", "updated"], response: httpx.Response) -> CommentResult:
    try:
        data = response.json()
    except ValueError:
        data = {}
    comment_id = data.get("id") if isinstance(data, dict) else None
    url = data.get("html_url") if isinstance(data, dict) else None
    return CommentResult(action, int(comment_id) if isinstance(comment_id, int) else 0, url)
