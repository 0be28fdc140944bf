"""A ticket classifier on loopback: the "new app" of docs/first-hour.md, which a test walks through.

``POST /classify`` with ``{"ticket": TEXT}`` answers ``{"label": LABEL, "confidence": 0.9}``; 422 without
a ticket. Labels come from keywords (charged, refund -> billing; crash, error -> bug; else question),
as deterministically as a model at temperature 0 that never meets a near-tie. ``version = 2`` is the
pull request that makes it wobble: a ticket about a charge is then ``billing`` only one time in three,
``refund`` the other two, in a fixed cycle, so the same samples always give the same numbers.

Python use::

    from tests.support.ticket_app import TicketApp

    with TicketApp() as app:
        app.url("/classify")   # "http://127.0.0.1:PORT/classify"
        app.version = 2        # the pull request
        app.requests           # how many classifications were asked
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler

KEYWORDS = {"charged": "billing", "invoice": "billing", "crash": "bug", "error": "bug"}
WOBBLE = ("billing", "refund", "refund")  # version 2's answers to a billing ticket, in turn


class TicketApp(LoopbackServer):
    thread_name = "ticket-app"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.version = 1
        self.requests = 0
        self._lock = threading.Lock()
        self._wobble = itertools.cycle(WOBBLE)
        super().__init__(_handler_for(self), host, port)

    def url(self, path: str) -> str:
        return self.root_url + path

    def classify(self, ticket: str) -> str:
        words = ticket.lower()
        label = next((label for word, label in KEYWORDS.items() if word in words), "question")
        with self._lock:
            self.requests += 1
            if label == "billing" and self.version == 2:
                return next(self._wobble)
        return label


def _handler_for(app: TicketApp) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body: Any = self.json_body()
            ticket = body.get("ticket") if isinstance(body, dict) else None
            if self.path != "/classify":
                self._send(404, {"error": f"no route {self.path}"})
            elif not isinstance(ticket, str) or not ticket:
                self._send(422, {"error": "`ticket` is required"})
            else:
                self._send(200, {"label": app.classify(ticket), "confidence": 0.9})

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
