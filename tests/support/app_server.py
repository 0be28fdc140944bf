"""A small application on loopback: an answering service with a cache keyed on the idempotency key.

It stands in for "the team's own application" that the `http` provider measures. Its "model" is
deliberately non-deterministic: every cache miss gives a new answer ("Answer #3 to: ..."), a hit
gives the cached one. So a suite that sends the same key on every sample sees one unique
completion, and per-sample keys see as many as there were samples.

Python use::

    from tests.support.app_server import AnswerApp

    with AnswerApp(token="app-secret") as app:
        app.url("/v1/answer")   # "http://127.0.0.1:PORT/v1/answer"
        app.misses, app.hits    # how often the "model" ran / the cache answered
        app.requests            # [Received(method, path, headers, body)]

Routes (all answers are JSON):

- ``POST /v1/answer`` with ``{"question": ..., "idempotency_key": ...}`` (``prompt`` is accepted for
  ``question``; the key may also come as an ``Idempotency-Key`` header) ->
  ``{"data": {"answer": TEXT, "cached": BOOL}, "request_id": N}``; 422 without a question.
- ``GET /v1/answer?question=...&idempotency_key=...``: the same.
- ``POST /v1/chat/completions``: the same application behind an OpenAI-compatible route, its cache
  keyed on the ``Idempotency-Key`` header.
- ``POST /v1/structured``: ``{"data": {"answer": {"borough": "Queens", "n": 1}}}``: a non-string answer.
- ``POST /v1/unavailable``: 503 with ``Retry-After: 0``.
- ``POST /v1/html``: 200 with an HTML page (not JSON).
- ``POST /v1/echo-key``: ``{"data": {"answer": TEXT}}`` where TEXT is the bearer token the request
  came with in every spelling of `key_spellings` (a careless application leaking its key).

With ``cache=False`` the application has no cache: every request gets a new answer.
With ``token`` set, every route needs ``Authorization: Bearer TOKEN`` (401 otherwise).

As a process::

    python -m tests.support.app_server --port 0 [--token TOKEN]

prints its base URL as the first line of stdout and serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
import threading
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler, serve_until_signalled


def key_spellings(key: str) -> list[str]:
    """A key as it leaks: raw, URL-encoded, JSON-escaped, base64, and inside Basic credentials."""
    return [
        key,
        urllib.parse.quote(key, safe=""),
        json.dumps(key)[1:-1],
        base64.b64encode(key.encode()).decode(),
        "Basic " + base64.b64encode(f"user:{key}".encode()).decode(),
    ]


def more_key_spellings(key: str) -> dict[str, str]:
    """The spellings the first round of redaction let through (issue 25, item 11), by name."""
    raw = key.encode()
    return {
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "upper-cased": key.upper(),
        "lower-cased": key.lower(),
        "reversed": key[::-1],
        "zero-width-split": "\u200b".join(key),
        "soft-hyphen-split": "\u00ad".join(key),
        "percent-encoded, every byte": "".join(f"%{b:02X}" for b in raw),
        "\\u-escaped": "".join(f"\\u{ord(c):04x}" for c in key),
        "\\u-escaped, upper hex": "".join(f"\\u{ord(c):04X}" for c in key),
        "html decimal entities": "".join(f"&#{ord(c)};" for c in key),
        "html hex entities": "".join(f"&#x{ord(c):X};" for c in key),
        "html-escaped by the stdlib": html.escape(key),
    }


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: Any  # the parsed JSON body, or the query parameters of a GET


class AnswerApp(LoopbackServer):
    """The application; a context manager that starts it in a background thread."""

    thread_name = "answer-app"

    def __init__(self, *, token: str | None = None, cache: bool = True, host: str = "127.0.0.1", port: int = 0) -> None:
        self.token = token
        self.cache = cache  # False: every request reaches the "model", key or not
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}
        self._requests: list[Received] = []
        self.misses = 0
        self.hits = 0
        super().__init__(_handler_for(self), host, port)

    @property
    def base_url(self) -> str:
        return self.root_url

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    # ---- the application

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON payload or raw text, extra headers) for one request."""
        with self._lock:
            self._requests.append(Received(method, path, dict(headers), body))
            number = len(self._requests)
        if self.token is not None and headers.get("authorization") != f"Bearer {self.token}":
            return 401, {"error": "missing or wrong bearer token"}, {}
        route = urllib.parse.urlsplit(path).path
        if route == "/v1/unavailable":
            return 503, {"error": "the model is warming up"}, {"Retry-After": "0"}
        if route == "/v1/html":
            return 200, "<html><body>maintenance</body></html>", {}
        if route == "/v1/structured":
            return 200, {"data": {"answer": {"n": 1, "borough": "Queens"}}}, {}
        if route == "/v1/echo-key":
            token = headers.get("authorization", "").removeprefix("Bearer ")
            return 200, {"data": {"answer": "my key: " + " | ".join(key_spellings(token))}}, {}
        if route == "/v1/chat/completions":
            return self._chat(headers, body)
        if route != "/v1/answer":
            return 404, {"error": f"no route {route}"}, {}
        fields = body if isinstance(body, dict) else {}
        question = fields.get("question") or fields.get("prompt")
        if not isinstance(question, str) or not question:
            return 422, {"error": "`question` is required"}, {}
        key = fields.get("idempotency_key") or headers.get("idempotency-key")
        answer, cached = self._answer(question, key if isinstance(key, str) and key else None)
        return 200, {"data": {"answer": answer, "cached": cached}, "request_id": number}, {}

    def _chat(self, headers: Mapping[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        """The application behind an OpenAI-compatible route: its cache keyed on the Idempotency-Key header."""
        messages = body.get("messages") if isinstance(body, dict) else None
        users = [m.get("content") for m in messages or [] if isinstance(m, dict) and m.get("role") == "user"]
        if not users or not isinstance(users[-1], str):
            return 400, {"error": {"message": "no user message", "type": "invalid_request_error"}}, {}
        answer, _ = self._answer(users[-1], headers.get("idempotency-key") or None)
        choice = {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
        return 200, {"object": "chat.completion", "model": body.get("model"), "choices": [choice]}, {}

    def _answer(self, question: str, key: str | None) -> tuple[str, bool]:
        with self._lock:
            if self.cache and key is not None and key in self._cache:
                self.hits += 1
                return self._cache[key], True
            self.misses += 1
            answer = f"Answer #{self.misses} to: {question}"
            if key is not None:
                self._cache[key] = answer
            return answer, False


def _handler_for(app: AnswerApp) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            self._respond("GET", {k: v[-1] for k, v in query.items()})

        def do_POST(self) -> None:
            self._respond("POST", self.json_body())

        def _respond(self, method: str, body: Any) -> None:
            headers = self.lower_headers()
            status, payload, extra = app.handle(method, self.path, headers, body)
            is_text = isinstance(payload, str)
            data = payload.encode() if is_text else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/html" if is_text else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.app_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", default=None, help="require Authorization: Bearer TOKEN")
    args = parser.parse_args(argv)
    app = AnswerApp(token=args.token, host=args.host, port=args.port)
    return serve_until_signalled(app, app.base_url)


if __name__ == "__main__":
    sys.exit(main())
