"""A real HTTP server speaking the OpenAI chat-completions API on loopback, scripted for tests.

Python use::

    from tests.support.openai_server import Fault, ScriptedOpenAI

    script = {"Where was Feynman born?": [("Queens, New York", 8), ("New York City", 2)]}
    faults = [Fault("status", status=429, every=7, retry_after="0.01"), Fault("status", status=500, every=11)]
    with ScriptedOpenAI(script, default="OK", latency_s=0.01, faults=faults) as server:
        server.base_url      # "http://127.0.0.1:PORT/v1"
        server.requests      # [Received(number, path, headers, body)], a thread-safe copy
        server.count         # requests received so far
        server.max_in_flight # most requests handled at the same time

Completions: for each prompt (matched on the content of the LAST user message) a distribution
[(text, weight), ...], expanded in order and served in a cycle, one step per completion actually
served (faulted requests do not advance it), so ten good replies of the example above are always
8 x "Queens, New York" and 2 x "New York City". Unknown prompts get `default` (a text or a
distribution). When the request carries `tools`, the reply is a tool call of the first tool with the
scripted text as its `arguments` (content null). When it asks for `logprobs`, the reply carries
`choices[0].logprobs.content` with `top_logprobs` alternatives. Every reply has `usage`
(whitespace-separated word counts), `model` and `system_fingerprint`.

Faults: `Fault(action, every=N | at={numbers} | prompt=TEXT | when=callable(body, number))` rules
are checked in order on the 1-based global request number; the first match wins. A rule with
no selector matches every request. Actions:

- ``status``: reply `status` (default 500) with `body` (default an OpenAI-style error JSON) and,
  if given, a `Retry-After: retry_after` header.
- ``not_json``: 200 with an HTML body.
- ``truncated``: 200 whose Content-Length promises more than is sent, then the connection closes.
- ``hang``: wait `delay_s` (default: until the server closes) and then drop the connection.
- ``delay``: wait `delay_s`, then reply normally.
- ``reset``: close the connection with a TCP reset, no reply.
- ``wrong_shape``: 200 with valid JSON but no `choices`.
- ``length``: a normal completion whose finish_reason is "length".
- ``huge``: 200 with a valid completion whose body is `size` bytes (default 10 MB), streamed.
- ``echo_auth``: reply `status` (default 401) with a body echoing the Authorization header back.

`api_key="sk-..."` makes the server refuse (401, OpenAI-style message) requests without
`Authorization: Bearer sk-...`.

`sleep=callable(seconds)` takes the place of the server's timed waits (`latency_s`, ``delay``, a
``hang`` with a `delay_s`), so a test can record or hold them instead of timing replies. Without
it the server waits the time out, or less when it closes.

As a process (for CI jobs and container tests)::

    python -m tests.support.openai_server --port 0 --script SCRIPT.json [--host 127.0.0.1]

prints its base URL as the first line of stdout and serves until SIGTERM or SIGINT. SCRIPT.json::

    {
      "completions": {"Where was Feynman born?": [["Queens, New York", 8], ["New York City", 2]]},
      "default": "OK",
      "latency_s": 0.2,
      "model": "scripted-model",
      "fingerprint": "fp_scripted",
      "api_key": null,
      "faults": [
        {"action": "status", "status": 429, "every": 7, "retry_after": "0.05"},
        {"action": "not_json", "at": [3]},
        {"action": "delay", "prompt": "slow question", "delay_s": 2}
      ]
    }

All keys are optional.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackHTTPServer, LoopbackServer, QuietHandler, Received, serve_until_signalled

Distribution = Sequence[tuple[str, int]]
ACTIONS = frozenset(
    {
        "status",
        "not_json",
        "truncated",
        "hang",
        "delay",
        "reset",
        "wrong_shape",
        "length",
        "huge",
        "echo_auth",
    }
)
_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s])")


@dataclass(frozen=True)
class Fault:
    """One fault rule; see the module docstring for the actions and selectors."""

    action: str
    every: int | None = None
    at: frozenset[int] | Iterable[int] | None = None
    prompt: str | None = None
    when: Callable[[Mapping[str, Any], int], bool] | None = None
    status: int | None = None
    body: str | None = None
    retry_after: str | None = None
    delay_s: float | None = None
    size: int = 10 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fault action {self.action!r} (expected one of {sorted(ACTIONS)})")
        if self.at is not None:
            object.__setattr__(self, "at", frozenset(self.at))

    def matches(self, body: Mapping[str, Any], number: int) -> bool:
        if self.every is not None and number % self.every != 0:
            return False
        if self.at is not None and number not in self.at:  # type: ignore[operator]
            return False
        if self.prompt is not None and last_user_message(body) != self.prompt:
            return False
        return not (self.when is not None and not self.when(body, number))


def last_user_message(body: Mapping[str, Any]) -> str | None:
    messages = body.get("messages") if isinstance(body, Mapping) else None
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return None


def _expand(distribution: str | Distribution) -> list[str]:
    if isinstance(distribution, str):
        return [distribution]
    out = [text for text, weight in distribution for _ in range(int(weight))]
    if not out:
        raise ValueError("a completion distribution needs at least one text with a positive weight")
    return out


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    count: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    requests: list[Received] = field(default_factory=list)
    cycles: dict[str | None, itertools.cycle[str]] = field(default_factory=dict)


class ScriptedOpenAI(LoopbackServer):
    """The scripted server; a context manager that starts it in a background thread."""

    thread_name = "scripted-openai"
    poll_interval = 0.02

    def __init__(
        self,
        completions: Mapping[str, str | Distribution] | None = None,
        *,
        default: str | Distribution = "OK",
        latency_s: float = 0.0,
        faults: Sequence[Fault] = (),
        model: str = "scripted-model",
        fingerprint: str | None = "fp_scripted",
        api_key: str | None = None,
        sleep: Callable[[float], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._completions = {prompt: _expand(dist) for prompt, dist in (completions or {}).items()}
        self._default = _expand(default)
        self.latency_s = latency_s
        self.faults = list(faults)
        self.model = model
        self.fingerprint = fingerprint
        self.api_key = api_key
        self._sleep = sleep
        self._state = _State()
        self._closing = threading.Event()
        super().__init__(_handler_for(self), host, port, server_class=_Server)

    def _before_shutdown(self) -> None:
        self._closing.set()  # releases hanging handlers

    # ---- what tests read

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    @property
    def requests(self) -> list[Received]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def count(self) -> int:
        with self._state.lock:
            return self._state.count

    @property
    def max_in_flight(self) -> int:
        with self._state.lock:
            return self._state.max_in_flight

    # ---- used by the handler

    def _arrive(self, path: str, headers: Mapping[str, str], body: Any) -> int:
        with self._state.lock:
            self._state.count += 1
            number = self._state.count
            self._state.requests.append(Received(number, path, dict(headers), body))
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)
            return number

    def _leave(self) -> None:
        with self._state.lock:
            self._state.in_flight -= 1

    def _fault_for(self, body: Any, number: int) -> Fault | None:
        mapping = body if isinstance(body, Mapping) else {}
        return next((f for f in self.faults if f.matches(mapping, number)), None)

    def _next_text(self, body: Mapping[str, Any]) -> str:
        prompt = last_user_message(body)
        key = prompt if prompt in self._completions else None
        with self._state.lock:
            cycle = self._state.cycles.get(key)
            if cycle is None:
                cycle = itertools.cycle(self._completions[key] if key is not None else self._default)
                self._state.cycles[key] = cycle
            return next(cycle)

    def _wait(self, seconds: float | None) -> None:
        """Wait `seconds` (None: until the server closes); a test's `sleep` takes the timed waits."""
        if seconds is not None and self._sleep is not None:
            self._sleep(seconds)
        else:
            self._closing.wait(seconds)

    def completion_body(self, body: Mapping[str, Any], text: str, finish_reason: str = "stop") -> dict[str, Any]:
        """The JSON an OpenAI server would return for `text` (public so tests can build expectations)."""
        message: dict[str, Any] = {"role": "assistant", "content": text}
        tools = body.get("tools")
        if isinstance(tools, list) and tools:
            name = (tools[0].get("function") or {}).get("name", "tool") if isinstance(tools[0], dict) else "tool"
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}],
            }
            finish_reason = "tool_calls" if finish_reason == "stop" else finish_reason
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish_reason}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": _logprobs(text, int(body.get("top_logprobs") or 0))}
        else:
            choice["logprobs"] = None
        prompt_words = sum(
            len(str(m.get("content", "")).split()) for m in body.get("messages") or [] if isinstance(m, dict)
        )
        reply: dict[str, Any] = {
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt_words,
                "completion_tokens": len(text.split()),
                "total_tokens": prompt_words + len(text.split()),
            },
        }
        if self.fingerprint is not None:
            reply["system_fingerprint"] = self.fingerprint
        return reply


def _logprobs(text: str, top: int) -> list[dict[str, Any]]:
    """Deterministic token log-probabilities; the runner-up is the token upper-cased (or 'X')."""
    out = []
    for i, token in enumerate(_TOKEN.findall(text)):
        logprob = -0.01 * (i % 5 + 1)
        alternative = token.upper() if token.upper() != token else token + "X"
        entry: dict[str, Any] = {"token": token, "logprob": logprob, "bytes": list(token.encode())}
        entry["top_logprobs"] = [
            {"token": token, "logprob": logprob, "bytes": list(token.encode())},
            {"token": alternative, "logprob": logprob - 2.5, "bytes": list(alternative.encode())},
        ][: max(top, 0)]
        out.append(entry)
    return out


class _Server(LoopbackHTTPServer):
    request_queue_size = 256  # a burst of 64+ connects must not overflow the listen backlog


def _handler_for(server: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(QuietHandler):
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def do_GET(self) -> None:
            self._send_json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

        def do_POST(self) -> None:
            body = self.json_body()
            headers = self.lower_headers()
            number = server._arrive(self.path, headers, body)
            try:
                self._answer(number, body, headers)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            finally:
                server._leave()

        def _answer(self, number: int, body: Any, headers: Mapping[str, str]) -> None:
            if server.latency_s:
                server._wait(server.latency_s)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"unknown path {self.path}", "type": "not_found"}})
                return
            if server.api_key is not None and headers.get("authorization") != f"Bearer {server.api_key}":
                given = headers.get("authorization", "").removeprefix("Bearer ")
                message = f"Incorrect API key provided: {given[:3]}***{given[-4:]}." if given else "No API key."
                self._send_json(401, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            if not isinstance(body, dict):
                self._send_json(400, {"error": {"message": "the body is not JSON", "type": "invalid_request"}})
                return
            fault = server._fault_for(body, number)
            if fault is None:
                self._send_json(200, server.completion_body(body, server._next_text(body)))
                return
            self._fault(fault, body, headers)

        def _fault(self, fault: Fault, body: dict[str, Any], headers: Mapping[str, str]) -> None:
            action = fault.action
            if action == "status":
                status = fault.status or 500
                payload = fault.body
                if payload is None:
                    payload = json.dumps({"error": {"message": f"scripted {status}", "type": "server_error"}})
                extra = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                self._send(status, payload.encode(), "application/json", extra)
            elif action == "echo_auth":
                echoed = headers.get("authorization", "")
                payload = json.dumps({"error": {"message": f"bad credentials: {echoed}", "headers": dict(headers)}})
                self._send(fault.status or 401, payload.encode(), "application/json")
            elif action == "not_json":
                self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            elif action == "truncated":
                data = json.dumps(server.completion_body(body, server._next_text(body))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
            elif action == "hang":
                server._wait(fault.delay_s)
                self.close_connection = True
            elif action == "delay":
                server._wait(fault.delay_s or 0.0)
                self._send_json(200, server.completion_body(body, server._next_text(body)))
            elif action == "reset":
                # SO_LINGER with a zero timeout turns close() into a TCP RST.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
            elif action == "wrong_shape":
                self._send_json(200, {"id": "x", "object": "chat.completion", "model": server.model})
            elif action == "length":
                self._send_json(200, server.completion_body(body, server._next_text(body), "length"))
            elif action == "huge":
                self._send_huge(body, fault.size)

        def _send_huge(self, body: dict[str, Any], size: int) -> None:
            plain = {**body, "logprobs": False, "tools": None}  # so the placeholder occurs exactly once
            head, tail = json.dumps(server.completion_body(plain, "\0")).encode().split(b"\\u0000")
            filler = max(size - len(head) - len(tail), 0)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(head) + filler + len(tail)))
            self.end_headers()
            self.wfile.write(head)
            chunk = b"a" * 65536
            left = filler
            while left > 0:
                self.wfile.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)
            self.wfile.write(tail)

        def _send_json(self, status: int, payload: Any) -> None:
            self._send(status, json.dumps(payload).encode(), "application/json")

        def _send(self, status: int, data: bytes, content_type: str, extra: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler


def from_script(script: Mapping[str, Any], *, host: str = "127.0.0.1", port: int = 0) -> ScriptedOpenAI:
    """A server from the JSON script format of the module docstring."""
    known = {"completions", "default", "latency_s", "model", "fingerprint", "api_key", "faults"}
    unknown = set(script) - known
    if unknown:
        raise ValueError(f"unknown script keys {sorted(unknown)} (expected some of {sorted(known)})")

    def dist(value: Any) -> str | Distribution:
        return value if isinstance(value, str) else [(str(t), int(w)) for t, w in value]

    faults = []
    for rule in script.get("faults") or []:
        rule = dict(rule)
        if "at" in rule:
            rule["at"] = frozenset(int(n) for n in rule["at"])
        faults.append(Fault(**rule))
    return ScriptedOpenAI(
        {prompt: dist(value) for prompt, value in (script.get("completions") or {}).items()},
        default=dist(script.get("default", "OK")),
        latency_s=float(script.get("latency_s", 0.0)),
        faults=faults,
        model=script.get("model", "scripted-model"),
        fingerprint=script.get("fingerprint", "fp_scripted"),
        api_key=script.get("api_key"),
        host=host,
        port=port,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.support.openai_server", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="the JSON script (see the module docstring)")
    args = parser.parse_args(argv)
    script: dict[str, Any] = {}
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            script = json.load(handle)
    server = from_script(script, host=args.host, port=args.port)
    return serve_until_signalled(server, server.base_url)


if __name__ == "__main__":
    sys.exit(main())
