"""A real HTTP server on loopback shaped like the parts of the GitHub API the Action uses.

Python use::

    from tests.support.github_server import FakeGitHub

    with FakeGitHub(token="ghs_x") as github:       # ghs_x acts as github-actions[bot]
        github.add_token("ghp_y", "octocat", app=False)  # a second token, a person's
        github.add_comments(7, [f"comment {i}" for i in range(150)], login="octocat")
        github.api_url                   # "http://127.0.0.1:PORT" (what GITHUB_API_URL holds)
        github.forbid_writes = True      # writes answer 403 "Resource not accessible by integration"
        github.fail_next([502, 503], on="list")   # the next requests of that route answer these first
        github.secondary_rate_limit_next(on="create", retry_after=30)
        github.primary_rate_limit_next(on="list", reset_at=1_700_000_100)
        github.vanish_before_next_edit() # the next PATCH finds its comment deleted (404)
        github.hold_creates(2)           # the next 2 POSTs wait for each other, then both create
        github.minimize(comment_id)      # as a person hiding it in the UI
        github.comments(7)               # [{"id", "node_id", "body", "user", ...}] in creation order
        github.requests                  # [Recorded(method, path, query, authorization, body, route)]

Routes (the names `on=` takes): "list" GET and "create" POST /repos/{o}/{r}/issues/{n}/comments
(per_page <= 100, default 30; page; a `Link` header with rel="next" and rel="last" as GitHub sends
it); "edit" PATCH and "delete" DELETE /repos/{o}/{r}/issues/comments/{id}; "user" GET /user (403
"Resource not accessible by integration" for an installation token, as GitHub answers it);
"graphql" POST /graphql, which understands `viewer { login }`, `nodes(ids: $ids) { ... on
IssueComment { id isMinimized } }` (REST comments do not carry isMinimized) and the
`minimizeComment` mutation; `on=` also takes these as "viewer", "nodes" and "minimize".

A comment's author is the account of the token that created it. A request whose Authorization is
not a known token gets 401 "Bad credentials". Every answer carries `x-ratelimit-*` headers, as
GitHub's do. GET /_state returns the comments and the requests.

As a process (for the container smoke test)::

    python -m tests.support.github_server [--host 127.0.0.1] [--port 0] [--token T] [--existing N --pr P]

prints its API URL as the first line of stdout and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from tests.support.loopback import LoopbackServer, QuietHandler, serve_until_signalled

Route = Literal["list", "create", "edit", "delete", "user", "graphql", "other"]
Operation = Literal["viewer", "nodes", "minimize", "unknown"]  # the GraphQL requests, for `on=` too
Answer = tuple[int, Any, dict[str, str]]

LIST_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments$")
EDIT_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)$")
ACTIONS_BOT = "github-actions[bot]"
NOT_ACCESSIBLE = "Resource not accessible by integration"
FORBIDDEN = {
    "message": NOT_ACCESSIBLE,
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
    "status": "403",
}
SECONDARY_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you "
    "reach out to GitHub Support for help, please include the request ID."
)
PRIMARY_LIMIT = "API rate limit exceeded for installation ID 4242."
#: What every answer says of the primary rate limit when it is not spent.
RATE_HEADERS = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", "x-ratelimit-reset": "4102444800"}
HOLD_TIMEOUT_S = 10.0  # a deadlock guard only: held creates that never meet answer 500


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    body: Any
    route: str = ""


@dataclass(frozen=True)
class Identity:
    """Who a token acts as; `app` for an installation token (GITHUB_TOKEN), which GET /user refuses."""

    login: str
    app: bool = True


@dataclass(frozen=True)
class Scripted:
    """One scripted answer for the next request of `on` (any route when None)."""

    status: int
    on: str | None
    after_write: bool = False
    message: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


class FakeGitHub(LoopbackServer):
    """The fake API; a context manager that serves it from a background thread."""

    thread_name = "fake-github"

    def __init__(
        self,
        *,
        token: str | None = None,
        login: str = ACTIONS_BOT,
        owner: str = "acme",
        repo: str = "widgets",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.token = token
        self.owner = owner
        self.repo = repo
        self.forbid_writes = False
        self._default = Identity(login)
        self._identities: dict[str, Identity] = {token: Identity(login)} if token is not None else {}
        self._lock = threading.Lock()
        self._comments: dict[int, dict[str, Any]] = {}
        self._minimized: set[int] = set()
        self._next_id = 1000
        self._failures: list[Scripted] = []
        self._requests: list[Recorded] = []
        self._vanish_next_edit = False
        self._held: threading.Barrier | None = None
        self._held_left = 0
        super().__init__(_handler_for(self), host, port)

    @property
    def api_url(self) -> str:
        return self.root_url

    # ---- what tests set and read

    def add_token(self, token: str, login: str, *, app: bool = False) -> None:
        with self._lock:
            self._identities[token] = Identity(login, app)

    def add_comments(self, number: int, bodies: Iterable[str], *, login: str = "someone") -> list[int]:
        return [self._create(number, body, login) for body in bodies]

    def fail_next(
        self, statuses: Sequence[int], *, on: Route | Operation | None = None, after_write: bool = False
    ) -> None:
        """Answer the next requests (of route `on`, if given) with these statuses.

        With `after_write` the write is done first and only its answer fails, as when a proxy
        times out after GitHub already created the comment.
        """
        with self._lock:
            self._failures.extend(Scripted(status, on, after_write) for status in statuses)

    def secondary_rate_limit_next(self, *, on: Route | Operation | None = None, retry_after: int | None = None) -> None:
        """A secondary rate limit: 403 with GitHub's message, and `retry-after` when given."""
        headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
        with self._lock:
            self._failures.append(Scripted(403, on, message=SECONDARY_LIMIT, headers=headers))

    def primary_rate_limit_next(self, *, on: Route | Operation | None = None, reset_at: int, status: int = 403) -> None:
        """The primary rate limit spent: `x-ratelimit-remaining: 0` until the `reset_at` epoch second."""
        headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset_at)}
        with self._lock:
            self._failures.append(Scripted(status, on, message=PRIMARY_LIMIT, headers=headers))

    def vanish_before_next_edit(self) -> None:
        """The next PATCH finds its comment deleted, as if a person deleted it after the gate listed it."""
        with self._lock:
            self._vanish_next_edit = True

    def hold_creates(self, count: int) -> None:
        """The next `count` POSTs wait for each other before creating: runs that both listed nothing."""
        with self._lock:
            self._held = threading.Barrier(count, timeout=HOLD_TIMEOUT_S)
            self._held_left = count

    def minimize(self, comment_id: int) -> None:
        with self._lock:
            self._minimized.add(comment_id)

    def is_minimized(self, comment_id: int) -> bool:
        with self._lock:
            return comment_id in self._minimized

    def comments(self, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self._comments.values() if c["issue"] == number]

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def writes(self, method: str) -> list[Recorded]:
        """The REST requests of `method` (GraphQL's POSTs are in `graphql_calls`)."""
        return [r for r in self.requests if r.method == method and r.route != "graphql"]

    def graphql_calls(self, containing: str = "") -> list[Recorded]:
        """The GraphQL requests whose query contains `containing`."""
        return [
            r
            for r in self.requests
            if r.route == "graphql" and isinstance(r.body, dict) and containing in str(r.body.get("query"))
        ]

    # ---- the API

    def _create(self, number: int, body: str, login: str) -> int:
        with self._lock:
            self._next_id += 1
            cid = self._next_id
            self._comments[cid] = {
                "id": cid,
                "node_id": f"IC_kwDOfake{cid}",
                "issue": number,
                "body": body,
                "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
                "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#issuecomment-{cid}",
            }
            return cid

    def handle(self, method: str, url: str, headers: dict[str, str], body: Any, base: str) -> Answer:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        if method == "GET" and parts.path == "/_state":
            with self._lock:
                state = {"comments": list(self._comments.values()), "requests": [asdict(r) for r in self._requests]}
            return 200, state, {}
        route = _route_of(method, parts.path)
        operation = _operation_of(body) if route == "graphql" else route
        with self._lock:
            self._requests.append(Recorded(method, parts.path, query, headers.get("authorization"), body, route))
            failure = self._take_failure(route, operation)
        if failure is not None and not failure.after_write:
            return self._scripted(failure)
        status, payload, extra = self._answer(route, parts.path, query, headers.get("authorization"), body, base)
        if failure is not None:
            return self._scripted(failure, "after the write")
        return status, payload, {**RATE_HEADERS, **extra}

    def _take_failure(self, route: str, operation: str) -> Scripted | None:
        for i, failure in enumerate(self._failures):
            if failure.on in (None, route, operation):
                del self._failures[i]
                return failure
        return None

    @staticmethod
    def _scripted(failure: Scripted, note: str = "") -> Answer:
        message = failure.message or " ".join(filter(None, [f"scripted failure {failure.status}", note]))
        return failure.status, {"message": message}, {**RATE_HEADERS, **failure.headers}

    def _identity(self, auth: str | None) -> Identity | None:
        if not self._identities:
            return self._default
        for scheme in ("Bearer ", "token "):
            if auth is not None and auth.startswith(scheme):
                return self._identities.get(auth.removeprefix(scheme))
        return None

    def _answer(
        self, route: str, path: str, query: dict[str, list[str]], auth: str | None, body: Any, base: str
    ) -> Answer:
        who = self._identity(auth)
        if who is None:
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, {}
        if route == "user":
            if who.app:
                return 403, {**FORBIDDEN, "documentation_url": "https://docs.github.com/rest/users/users"}, {}
            return 200, {"login": who.login, "id": 583231, "type": "User"}, {}
        if route == "graphql":
            return self._graphql(body, who)
        match = LIST_PATH.match(path) or EDIT_PATH.match(path)
        if match is None or (match["owner"], match["repo"]) != (self.owner, self.repo):
            return 404, {"message": "Not Found"}, {}
        if route in ("create", "edit", "delete") and self.forbid_writes:
            return 403, FORBIDDEN, {}
        if route == "list":
            return self._list(int(match["number"]), query, base + path)
        if route == "create":
            return self._post(int(match["number"]), body, who)
        if route == "edit":
            return self._patch(int(match["id"]), body)
        if route == "delete":
            return self._delete(int(match["id"]))
        return 404, {"message": "Not Found"}, {}

    def _post(self, number: int, body: Any, who: Identity) -> Answer:
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            return 422, {"message": "Invalid request: body is required"}, {}
        with self._lock:
            barrier = self._held if self._held_left > 0 else None
            self._held_left -= 1 if barrier is not None else 0
        if barrier is not None:
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                return 500, {"message": "held create: the other POST never came"}, {}
        cid = self._create(number, body["body"], who.login)
        with self._lock:
            return 201, dict(self._comments[cid]), {}

    def _patch(self, cid: int, body: Any) -> Answer:
        with self._lock:
            if self._vanish_next_edit:
                self._vanish_next_edit = False
                self._comments.pop(cid, None)
            comment = self._comments.get(cid)
            if comment is None:
                return 404, {"message": "Not Found"}, {}
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return 422, {"message": "Invalid request: body is required"}, {}
            comment["body"] = body["body"]
            return 200, dict(comment), {}

    def _delete(self, cid: int) -> Answer:
        with self._lock:
            if self._comments.pop(cid, None) is None:
                return 404, {"message": "Not Found"}, {}
            self._minimized.discard(cid)
        return 204, None, {}

    def _list(self, number: int, query: dict[str, list[str]], url: str) -> Answer:
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = max(int(query.get("page", ["1"])[0]), 1)
        everything = self.comments(number)
        last = max(1, -(-len(everything) // per_page))
        items = everything[(page - 1) * per_page : page * per_page]
        links = []
        if page < last:
            links.append(f'<{url}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{url}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{url}?per_page={per_page}&page=1>; rel="first"')
        return 200, [_rest_shape(c) for c in items], ({"Link": ", ".join(links)} if links else {})

    # ---- GraphQL: the three operations the gate sends, answered in GitHub's shapes

    def _graphql(self, body: Any, who: Identity) -> Answer:
        query = body.get("query") if isinstance(body, dict) else None
        variables = (body.get("variables") or {}) if isinstance(body, dict) else {}
        if not isinstance(query, str) or not isinstance(variables, dict):
            return 400, {"message": "Problems parsing JSON"}, {}
        operation = _operation_of(body)
        if operation == "minimize":
            return self._graphql_minimize(variables.get("id"))
        if operation == "nodes":
            ids = variables.get("ids")
            return 200, {"data": {"nodes": [self._node(i) for i in ids or []]}}, {}
        if operation == "viewer":
            return 200, {"data": {"viewer": {"login": who.login}}}, {}
        return 200, {"errors": [{"message": "this fake does not know that query"}]}, {}

    def _node(self, node_id: object) -> dict[str, Any] | None:
        with self._lock:
            for cid, comment in self._comments.items():
                if comment["node_id"] == node_id:
                    return {"id": node_id, "isMinimized": cid in self._minimized}
        return None

    def _graphql_minimize(self, node_id: object) -> Answer:
        if self.forbid_writes:
            error = {"type": "FORBIDDEN", "path": ["minimizeComment"], "message": NOT_ACCESSIBLE}
            return 200, {"data": {"minimizeComment": None}, "errors": [error]}, {}
        with self._lock:
            found = [cid for cid, c in self._comments.items() if c["node_id"] == node_id]
            self._minimized.update(found)
        if not found:
            error = {"type": "NOT_FOUND", "message": f"Could not resolve to a node with the global id of '{node_id}'"}
            return 200, {"data": {"minimizeComment": None}, "errors": [error]}, {}
        return 200, {"data": {"minimizeComment": {"minimizedComment": {"isMinimized": True}}}}, {}


def _route_of(method: str, path: str) -> Route:
    if path == "/graphql" and method == "POST":
        return "graphql"
    if path == "/user" and method == "GET":
        return "user"
    listing, editing = LIST_PATH.match(path) is not None, EDIT_PATH.match(path) is not None
    if listing and method in ("GET", "POST"):
        return "list" if method == "GET" else "create"
    if editing and method in ("PATCH", "DELETE"):
        return "edit" if method == "PATCH" else "delete"
    return "other"


def _operation_of(body: Any) -> Operation:
    """Which of the GraphQL operations the fake knows a request is (by the fields it asks for)."""
    query = body.get("query") if isinstance(body, dict) else None
    if not isinstance(query, str):
        return "unknown"
    if "minimizeComment" in query:
        return "minimize"
    if "nodes(" in query:
        return "nodes"
    return "viewer" if "viewer" in query else "unknown"


def _rest_shape(comment: dict[str, Any]) -> dict[str, Any]:
    """A comment as REST lists it (the store's `issue` key is the fake's own)."""
    return {k: v for k, v in comment.items() if k != "issue"}


def _handler_for(github: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            body = self.json_body()
            host = self.headers.get("Host") or "{}:{}".format(*self.server.server_address[:2])
            headers = self.lower_headers()
            status, payload, extra = github.handle(self.command, self.path, headers, body, f"http://{host}")
            data = b"" if status == 204 else json.dumps(payload).encode()
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = _serve

    return Handler


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A fake GitHub API on loopback, for the container smoke test.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token")
    parser.add_argument("--owner", default="acme")
    parser.add_argument("--repo", default="widgets")
    parser.add_argument("--pr", type=int, default=1)
    parser.add_argument("--existing", type=int, default=0, help="comments already on --pr")
    args = parser.parse_args(argv)
    github = FakeGitHub(token=args.token, owner=args.owner, repo=args.repo, host=args.host, port=args.port)
    github.add_comments(args.pr, (f"an earlier comment {i}" for i in range(args.existing)))
    return serve_until_signalled(github, github.api_url)


if __name__ == "__main__":
    sys.exit(_main())
