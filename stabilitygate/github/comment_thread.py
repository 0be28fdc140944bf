"""Reading a pull request's comments, and picking out the ones the gate owns.

The gate owns a comment only when all three hold: the token's own account wrote it (for
`GITHUB_TOKEN` that is `github-actions[bot]`), its body starts with the hidden marker line
(`<!-- stabilitygate:SUITE -->`), and nobody minimized it. A person who pastes the marker into a
comment of their own does not hand that comment to the gate.

The comments come from the REST API, following every `Link: rel="next"` page; whether a comment is
minimized only GraphQL says (`IssueComment.isMinimized`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from pydantic import Field, TypeAdapter

from stabilitygate.github.api_client import Answer, GitHubClient, decode_json, validate_answer
from stabilitygate.github.api_errors import CommentError, shown_url
from stabilitygate.github.token_identity import Account

MAX_PAGES = 200  # 20,000 comments: far beyond any real PR; stops a server that links in a loop
NODES_PER_QUERY = 100  # GraphQL `nodes(ids:)` takes at most 100 ids

MINIMIZED_QUERY = (
    "query StabilitygateMinimized($ids: [ID!]!) { nodes(ids: $ids) { ... on IssueComment { id isMinimized } } }"
)


class Comment(Answer):
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


class _MinimizedState(Answer):
    id: str | None = None  # absent for an id that is not an IssueComment
    is_minimized: bool = Field(default=False, alias="isMinimized")


class _Nodes(Answer):
    nodes: list[_MinimizedState | None]


_COMMENT_PAGE = TypeAdapter(list[Comment])
_NODES = TypeAdapter(_Nodes)


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
        what = f"GET {shown_url(url)}"
        page: list[Comment] = validate_answer(_COMMENT_PAGE, decode_json(response, what), what)
        found += page
        url = response.links.get("next", {}).get("url")
        # The token goes only to the API it was given for, whatever a Link header says.
        if url is not None and not _same_origin(url, client.api_url):
            raise CommentError("the comment list links to another host; not following it")
    raise CommentError(f"more than {MAX_PAGES} pages of comments; giving up the search")


def minimized_node_ids(client: GitHubClient, node_ids: Sequence[str]) -> set[str]:
    """Which of these comments are minimized: REST does not say, GraphQL's `isMinimized` does."""
    hidden: set[str] = set()
    for start in range(0, len(node_ids), NODES_PER_QUERY):
        chunk = list(node_ids[start : start + NODES_PER_QUERY])
        data = client.graphql(MINIMIZED_QUERY, {"ids": chunk})
        nodes = validate_answer(_NODES, data, "GraphQL nodes").nodes
        hidden |= {node.id for node in nodes if node is not None and node.id is not None and node.is_minimized}
    return hidden


def own_marked_comments(client: GitHubClient, pr: PullRequest, marker: str, login: str) -> list[Comment]:
    """The comments the gate may own, oldest first: written by `login`, starting with `marker`, not minimized."""
    marked = [c for c in list_comments(client, pr) if c.is_marked_by(login, marker)]
    if not marked:
        return []
    hidden = minimized_node_ids(client, [c.node_id for c in marked if c.node_id])
    return sorted((c for c in marked if c.node_id not in hidden), key=lambda c: c.id)
