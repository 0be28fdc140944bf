"""What every loopback test server shares: a ThreadingHTTPServer served from a daemon thread.

A server subclasses `LoopbackServer`, builds its request handler (usually on `QuietHandler`) and
passes it to `LoopbackServer.__init__`; the base class binds the port at once (so the URL is known
before `start()`), serves from a background thread and is a context manager::

    class MyServer(LoopbackServer):
        thread_name = "my-server"

        def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
            super().__init__(_handler_for(self), host, port)

    with MyServer() as server:
        server.root_url  # "http://127.0.0.1:PORT"
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self


@dataclass(frozen=True)
class Received:
    """One request as a scripted API server saw it."""

    number: int  # 1-based, in arrival order
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: Any  # the parsed JSON body (None if it was not JSON)


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # close() must not wait for keep-alive connections a client left open
    request_queue_size = 128  # bursts of concurrent connects must not overflow the listen backlog
    allow_reuse_address = True


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive handler that logs nothing and reads JSON request bodies."""

    protocol_version = "HTTP/1.1"  # keep-alive, like the real APIs

    def log_message(self, format: str, *args: Any) -> None:  # quiet tests
        return

    def json_body(self) -> Any:
        """The request body parsed as JSON; None when there is none or it is not JSON."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def lower_headers(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}


class LoopbackServer:
    """Binds on construction, serves from a daemon thread between start() and close()."""

    thread_name: ClassVar[str] = "loopback-server"
    # shutdown() waits for the serve loop to notice, up to one poll interval (0.5 s by default).
    poll_interval: ClassVar[float] = 0.05

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        host: str,
        port: int,
        *,
        server_class: type[ThreadingHTTPServer] = LoopbackHTTPServer,
    ) -> None:
        self._server = server_class((host, port), handler)
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": self.poll_interval},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def _before_shutdown(self) -> None:
        """Runs first in close(): release handlers that would otherwise hold the shutdown up."""

    def close(self) -> None:
        self._before_shutdown()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def root_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"


def serve_until_signalled(server: LoopbackServer, url: str) -> int:
    """The `python -m` entry points: print `url` as the first stdout line, serve until SIGTERM/SIGINT."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with server:
        print(url, flush=True)
        while not stop.wait(0.2):  # a short wait keeps the main thread responsive to signals
            pass
    return 0
