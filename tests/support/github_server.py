"""A real HTTP server on loopback shaped like the parts of the GitHub REST API the Action uses.

Python use::

    from tests.support.github_server import FakeGitHub

    with FakeGitHub(token="ghs_x") as github:
        github.add_comments(7, [f"comment {i}" for i in range(150)])
        github.api_url                   # "http://127.0.0.1:PORT" (what GITHUB_API_URL holds)
        github.forbid_writes = True      # POST/PATCH answer 403 "Resource not accessible by integration"
        github.fail_next([502, 503])     # the next requests answer these statuses first
        github.comments(7)               # [{"id", "body", ...}] in creation order
        github.requests                  # [Recorded(method, path, query, authorization, body)]

Endpoints: GET /repos/{o}/{r}/issues/{n}/comments (per_page <= 100, default 30; page; a `Link`
header with rel="next" and rel="last" as GitHub sends it), POST to the same path (201),
PATCH /repos/{o}/{r}/issues/comments/{id} (200). A request whose Authorization is not the
configured token gets 401 "Bad credentials". GET /_state returns the comments and the requests.

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
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.support.loopback import LoopbackServer, QuietHandler, serve_until_signalled

LIST_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)/comments$")
EDIT_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/comments/(?P<id>\d+)$")
FORBIDDEN = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
    "status": "403",
}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    body: Any


class FakeGitHub(LoopbackServer):
    """The fake API; a context manager that serves it from a background thread."""

    thread_name = "fake-github"

    def __init__(
        self,
        *,
        token: str | None = None,
        owner: str = "acme",
        repo: str = "widgets",
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.token = token
        self.owner = owner
        self.repo = repo
        self.forbid_writes = False
        self._lock = threading.Lock()
        self._comments: dict[int, dict[str, Any]] = {}
        self._next_id = 1000
        self._failures: list[tuple[int, str | None, bool]] = []
        self._requests: list[Recorded] = []
        super().__init__(_handler_for(self), host, port)

    @property
    def api_url(self) -> str:
        return self.root_url

    # ---- what tests set and read

    def add_comments(self, number: int, bodies: Iterable[str], *, login: str = "someone") -> list[int]:
        return [self._create(number, body, login) for body in bodies]

    def fail_next(self, statuses: Sequence[int], *, method: str | None = None, after_write: bool = False) -> None:
        """Answer the next requests (of `method`, if given) with these statuses.

        With `after_write` the write is done first and only its answer fails, as when a proxy
        times out after GitHub already created the comment.
        """
        with self._lock:
            self._failures.extend((status, method, after_write) for status in statuses)

    def _take_failure(self, method: str) -> tuple[int, bool] | None:
        for i, (status, only, after_write) in enumerate(self._failures):
            if only is None or only == method:
                del self._failures[i]
                return status, after_write
        return None

    def comments(self, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self._comments.values() if c["issue"] == number]

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    def writes(self, method: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method]

    # ---- the API

    def _create(self, number: int, body: str, login: str) -> int:
        with self._lock:
            self._next_id += 1
            cid = self._next_id
            self._comments[cid] = {
                "id": cid,
                "issue": number,
                "body": body,
                "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
                "html_url": f"https://github.com/{self.owner}/{self.repo}/pull/{number}#issuecomment-{cid}",
            }
            return cid

    def handle(self, method: str, url: str, headers: dict[str, str], body: Any, base: str) -> tuple[int, Any, dict]:
        parts = urlsplit(url)
        query = parse_qs(parts.query)
        auth = headers.get("authorization")
        if method == "GET" and parts.path == "/_state":
            with self._lock:
                state = {"comments": list(self._comments.values()), "requests": [asdict(r) for r in self._requests]}
            return 200, state, {}
        with self._lock:
            self._requests.append(Recorded(method, parts.path, query, auth, body))
            failure = self._take_failure(method)
        if failure is not None and not failure[1]:
            return failure[0], {"message": f"scripted failure {failure[0]}"}, {}
        status, payload, extra = self._route(method, parts.path, query, auth, body, base)
        if failure is not None:
            return failure[0], {"message": f"scripted failure {failure[0]} after the write"}, {}
        return status, payload, extra

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], auth: str | None, body: Any, base: str
    ) -> tuple[int, Any, dict]:
        if self.token is not None and auth not in (f"Bearer {self.token}", f"token {self.token}"):
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}, {}
        listing, editing = LIST_PATH.match(path), EDIT_PATH.match(path)
        match = listing or editing
        if match is None or (match["owner"], match["repo"]) != (self.owner, self.repo):
            return 404, {"message": "Not Found"}, {}
        if method in ("POST", "PATCH") and self.forbid_writes:
            return 403, FORBIDDEN, {}
        if listing and method == "GET":
            return self._list(int(listing["number"]), query, base + path)
        if listing and method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return 422, {"message": "Invalid request: body is required"}, {}
            cid = self._create(int(listing["number"]), body["body"], "github-actions[bot]")
            return 201, self._comments[cid], {}
        if editing and method == "PATCH":
            cid = int(editing["id"])
            with self._lock:
                comment = self._comments.get(cid)
                if comment is None:
                    return 404, {"message": "Not Found"}, {}
                if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                    return 422, {"message": "Invalid request: body is required"}, {}
                comment["body"] = body["body"]
                return 200, dict(comment), {}
        return 404, {"message": "Not Found"}, {}

    def _list(self, number: int, query: dict[str, list[str]], url: str) -> tuple[int, Any, dict]:
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
        return 200, items, ({"Link": ", ".join(links)} if links else {})


def _handler_for(github: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def _serve(self) -> None:
            body = self.json_body()
            host = self.headers.get("Host") or "{}:{}".format(*self.server.server_address[:2])
            headers = self.lower_headers()
            status, payload, extra = github.handle(self.command, self.path, headers, body, f"http://{host}")
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

    return Handler


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
