"""A real HTTP server speaking Anthropic's Messages API on loopback, scripted for tests.

Python use::

    from tests.support.anthropic_server import ScriptedAnthropic, overloaded, text_reply, tool_reply

    script = [text_reply("Queens"), overloaded(retry_after="0"), tool_reply("answer", {"borough": "Queens"})]
    with ScriptedAnthropic(script, default=text_reply("OK"), api_key="sk-ant-test") as server:
        server.base_url   # "http://127.0.0.1:PORT" (the provider appends /v1/messages)
        server.requests   # [Received(number, path, headers, body)], a thread-safe copy
        server.count      # requests received so far

Replies are served in script order, one per valid request, then `default` for every later one
(a Reply, or a callable(body) -> Reply; `server.default` may be changed, `server.queue(*replies)`
appends to the script). Like the real API the server refuses, before consuming
the script: a path other than /v1/messages (404 not_found_error), a wrong or missing `x-api-key`
when `api_key` is set (401 authentication_error), a missing `anthropic-version` header, and a
body without `model`, an integer `max_tokens` or a `messages` list of user/assistant turns (400
invalid_request_error; a "system" role gets the real API's message about the top-level `system`).
Every successful reply carries `usage` (whitespace-separated word counts) and echoes the model.

As a process (for container checks)::

    python -m tests.support.anthropic_server --port 0 [--text OK] [--api-key KEY]

prints its base URL as the first line of stdout and answers every request with `--text` until
SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer, QuietHandler, Received, serve_until_signalled


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status, a JSON body and extra headers."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


def message_body(content: list[dict[str, Any]], stop_reason: str, model: str | None = None) -> dict[str, Any]:
    """A Messages API reply around `content` blocks; usage and model are filled in when served."""
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": None,
    }


def text_reply(*texts: str, stop_reason: str = "end_turn", model: str | None = None) -> Reply:
    """A reply with one text block per argument."""
    return Reply(body=message_body([{"type": "text", "text": t} for t in texts], stop_reason, model))


def tool_reply(name: str, tool_input: Any, *, preface: str | None = None) -> Reply:
    """The model calling tool `name` with `tool_input`, optionally after a text block."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": preface}] if preface else []
    blocks.append({"type": "tool_use", "id": "toolu_scripted", "name": name, "input": tool_input})
    return Reply(body=message_body(blocks, "tool_use"))


def error_reply(status: int, error_type: str, message: str, retry_after: str | None = None) -> Reply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    return Reply(status, {"type": "error", "error": {"type": error_type, "message": message}}, headers)


def overloaded(retry_after: str | None = None) -> Reply:
    """Anthropic's 529: the API is temporarily overloaded."""
    return error_reply(529, "overloaded_error", "Overloaded", retry_after)


Responder = Reply | Callable[[Mapping[str, Any]], Reply]


class ScriptedAnthropic(LoopbackServer):
    """The scripted server; a context manager that starts it in a background thread."""

    thread_name = "scripted-anthropic"

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        default: Responder | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._script = list(script)
        self.default: Responder = default if default is not None else text_reply("OK")
        self.api_key = api_key
        self._lock = threading.Lock()
        self._requests: list[Received] = []
        super().__init__(_handler_for(self), host, port)

    @property
    def base_url(self) -> str:
        return self.root_url

    @property
    def requests(self) -> list[Received]:
        with self._lock:
            return list(self._requests)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._requests)

    def queue(self, *replies: Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)

    # ---- used by the handler

    def _arrive(self, path: str, headers: Mapping[str, str], body: Any) -> None:
        with self._lock:
            self._requests.append(Received(len(self._requests) + 1, path, dict(headers), body))

    def _next_reply(self, body: Mapping[str, Any]) -> Reply:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        return self.default(body) if callable(self.default) else self.default

    def refusal(self, path: str, headers: Mapping[str, str], body: Any) -> Reply | None:
        """The error the real API would give this request, or None when it is well formed."""
        if path.split("?")[0].rstrip("/") != "/v1/messages":
            return error_reply(404, "not_found_error", f"Not found: {path}")
        if self.api_key is not None and headers.get("x-api-key") != self.api_key:
            return error_reply(401, "authentication_error", "invalid x-api-key")
        if not headers.get("anthropic-version"):
            return error_reply(400, "invalid_request_error", "anthropic-version: header is required")
        if not isinstance(body, dict):
            return error_reply(400, "invalid_request_error", "the body is not a JSON object")
        if not isinstance(body.get("model"), str):
            return error_reply(400, "invalid_request_error", "model: Field required")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            return error_reply(400, "invalid_request_error", "max_tokens: Field required")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return error_reply(400, "invalid_request_error", "messages: at least one message is required")
        for i, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            if role == "system":
                return error_reply(
                    400,
                    "invalid_request_error",
                    'messages: Unexpected role "system". The Messages API accepts a top-level `system`'
                    ' parameter, not "system" as an input message role.',
                )
            if role not in ("user", "assistant"):
                return error_reply(400, "invalid_request_error", f"messages.{i}.role: unexpected {role!r}")
        return None

    def served(self, reply: Reply, body: Mapping[str, Any]) -> Reply:
        """The reply with usage and model filled in, as the real API reports them."""
        if reply.status != 200 or not isinstance(reply.body, dict) or reply.body.get("type") != "message":
            return reply
        out = dict(reply.body)
        if out.get("model") is None:
            out["model"] = body.get("model")
        if out.get("usage") is None:
            words = [str(m.get("content", "")) for m in body.get("messages") or [] if isinstance(m, dict)]
            words.append(str(body.get("system") or ""))
            text = " ".join(str(b.get("text", "")) for b in out.get("content") or [] if isinstance(b, dict))
            out["usage"] = {
                "input_tokens": sum(len(w.split()) for w in words),
                "output_tokens": len(text.split()),
            }
        return Reply(reply.status, out, reply.headers)


def _handler_for(server: ScriptedAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self._send(error_reply(405, "invalid_request_error", "use POST"))

        def do_POST(self) -> None:
            body = self.json_body()
            headers = self.lower_headers()
            server._arrive(self.path, headers, body)
            reply = server.refusal(self.path, headers, body) or server.served(server._next_reply(body), body)
            try:
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _send(self, reply: Reply) -> None:
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.anthropic_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--text", default="OK", help="the completion every request gets")
    parser.add_argument("--api-key", default=None, help="refuse requests without this x-api-key")
    args = parser.parse_args(argv)
    server = ScriptedAnthropic(default=text_reply(args.text), api_key=args.api_key, host=args.host, port=args.port)
    return serve_until_signalled(server, server.base_url)


if __name__ == "__main__":
    sys.exit(main())
