"""Shared HTTP helpers: Retry-After, status and exception mapping, the bounded JSON fetch."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from stabilitygate.providers.httpbase import (
    ClientPool,
    default_ssl_context,
    error_for_exception,
    error_for_status,
    parse_retry_after,
    request_json,
)
from stabilitygate.providers.interface import FatalProviderError, ProviderError
from tests.support.openai_server import Fault, ScriptedOpenAI

SECRET = "sk-test/Secret+Key=123"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), ("0.25", 0.25), (" 7 ", 7.0), ("0", 0.0), (None, None), ("", None), ("soon", None), ("-1", None)],
)
def test_parse_retry_after_seconds(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value) == expected


# A fixed "now" (2025-10-20 22:40:00 UTC), so an HTTP-date converts to an exact number of seconds.
NOW = 1_761_000_000.0


def test_parse_retry_after_http_date_counts_from_now() -> None:
    in_30_s = email.utils.formatdate(NOW + 30, usegmt=True)
    assert parse_retry_after(in_30_s, now=NOW) == 30.0
    assert parse_retry_after(in_30_s, now=NOW + 10) == 20.0
    assert parse_retry_after(email.utils.formatdate(NOW - 5, usegmt=True), now=NOW) == 0.0  # already past
    assert parse_retry_after("nan", now=NOW) is None and parse_retry_after("inf", now=NOW) is None


def test_parse_retry_after_http_date_defaults_to_the_current_time() -> None:
    # Both dates are behind the real clock; counted from NOW instead, the first would be 30 s away.
    assert parse_retry_after(email.utils.formatdate(NOW + 30, usegmt=True)) == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_retryable_statuses(status: int) -> None:
    error = error_for_status(status, "busy", {"Retry-After": "2"}, [])
    assert type(error) is ProviderError and error.retryable
    assert error.status == status and error.kind == f"http_{status}" and error.retry_after == 2.0


def test_retry_after_header_is_found_whatever_its_case() -> None:
    assert error_for_status(429, "", {"retry-after": "1.5"}, []).retry_after == 1.5
    assert error_for_status(503, "", {}, []).retry_after is None


@pytest.mark.parametrize(
    ("status", "phrase"),
    [
        (400, "request rejected"),
        (401, "authentication refused (check the variable named by api_key_env)"),
        (403, "permission denied"),
        (404, "not found (check base_url and model)"),
        (422, "request not processable"),
        (418, "client error"),
    ],
)
def test_fatal_statuses_have_clear_redacted_messages(status: int, phrase: str) -> None:
    error = error_for_status(
        status,
        f'{{"error": "bad key {SECRET}"}}',
        {},
        [SECRET],
        url=f"https://user:{quote(SECRET, safe='')}@api.example.com/v1/chat/completions?key={SECRET}",
    )
    assert isinstance(error, FatalProviderError) and not error.retryable and error.status == status
    message = str(error)
    assert message.startswith(f"HTTP {status} from https://api.example.com/v1/chat/completions: {phrase}")
    assert SECRET not in message and "bad key ***" in message


def test_a_redirect_is_fatal_with_a_hint() -> None:
    error = error_for_status(301, "", {"Location": "https://api.example.com/v1"}, [], url="http://api.example.com/v1")
    assert isinstance(error, FatalProviderError) and "redirects are not followed; check base_url" in str(error)


def test_quota_exhausted_429_is_fatal() -> None:
    body = '{"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}'
    error = error_for_status(429, body, {"Retry-After": "1"}, [])
    assert isinstance(error, FatalProviderError) and "quota exhausted" in str(error)


def test_long_bodies_are_cut_to_one_line() -> None:
    error = error_for_status(500, "line one\n" + "x" * 5000, {}, [])
    assert "\n" not in str(error) and len(str(error)) < 400 and str(error).endswith("...")


def _request() -> httpx.Request:
    return httpx.Request("POST", f"https://api.example.com/v1/chat/completions?key={SECRET}")


@pytest.mark.parametrize(
    ("exc", "kind", "retryable"),
    [
        (httpx.ConnectTimeout("connect timed out", request=_request()), "timeout", True),
        (httpx.ReadTimeout("read timed out", request=_request()), "timeout", True),
        (TimeoutError(), "timeout", True),
        (httpx.ConnectError("[Errno 111] Connection refused", request=_request()), "connect", True),
        (httpx.ConnectError("[Errno -2] Name or service not known", request=_request()), "dns", True),
        (httpx.RemoteProtocolError("peer closed connection", request=_request()), "connection", True),
        (httpx.ReadError("[Errno 104] Connection reset by peer", request=_request()), "connection", True),
        (ConnectionResetError("reset"), "connection", True),
        (httpx.UnsupportedProtocol("Request URL has an unsupported protocol 'ftp://'"), "bad_url", False),
        (ValueError("odd"), "error", False),
    ],
)
def test_exceptions_map_to_typed_errors(exc: BaseException, kind: str, retryable: bool) -> None:
    error = error_for_exception(exc, [SECRET])
    assert error.kind == kind and error.retryable is retryable
    assert SECRET not in str(error)
    if kind == "bad_url":
        assert isinstance(error, FatalProviderError)


def test_exception_text_with_a_secret_is_redacted() -> None:
    exc = httpx.ConnectError(f"failed with header Authorization: Bearer {SECRET}", request=_request())
    error = error_for_exception(exc, [SECRET])
    assert SECRET not in str(error) and "Bearer ***" in str(error)
    assert "https://api.example.com/v1/chat/completions" in str(error) and "key=" not in str(error)


def test_provider_errors_pass_through_unchanged() -> None:
    original = ProviderError("x", retryable=True, kind="bad_body")
    assert error_for_exception(original, []) is original


# ---- request_json against real servers


def _fetch(url: str, *, max_bytes: int = 8 * 1024 * 1024, secrets: tuple[str, ...] = (), **kw: Any) -> Any:
    async def go() -> Any:
        async with httpx.AsyncClient(timeout=kw.pop("timeout", 5), verify=default_ssl_context()) as client:
            return await request_json(
                client,
                "POST",
                url,
                json={"messages": [{"role": "user", "content": "q"}]},
                headers=kw.pop("headers", {}),
                secrets=secrets,
                max_bytes=max_bytes,
            )

    return asyncio.run(go())


def test_request_json_returns_the_parsed_body() -> None:
    with ScriptedOpenAI(default="hello") as server:
        reply = _fetch(server.base_url + "/chat/completions")
    assert reply["choices"][0]["message"]["content"] == "hello"


def test_request_json_maps_429_with_retry_after() -> None:
    with (
        ScriptedOpenAI(faults=[Fault("status", status=429, retry_after="0.5")]) as server,
        pytest.raises(ProviderError) as info,
    ):
        _fetch(server.base_url + "/chat/completions")
    assert info.value.retryable and info.value.retry_after == 0.5 and info.value.status == 429


def test_request_json_redacts_an_echoed_authorization_header() -> None:
    with (
        ScriptedOpenAI(faults=[Fault("echo_auth")]) as server,
        pytest.raises(FatalProviderError) as info,
    ):
        _fetch(
            server.base_url + "/chat/completions",
            headers={"Authorization": f"Bearer {SECRET}"},
            secrets=(SECRET,),
        )
    assert "HTTP 401" in str(info.value) and SECRET not in str(info.value) and "Bearer ***" in str(info.value)


@pytest.mark.parametrize(("action", "kind"), [("not_json", "bad_body"), ("truncated", "connection")])
def test_request_json_broken_bodies_are_retryable(action: str, kind: str) -> None:
    with (
        ScriptedOpenAI(faults=[Fault(action)]) as server,
        pytest.raises(ProviderError) as info,
    ):
        _fetch(server.base_url + "/chat/completions")
    assert info.value.kind == kind and info.value.retryable


def test_request_json_reset_connection_is_retryable() -> None:
    with (
        ScriptedOpenAI(faults=[Fault("reset")]) as server,
        pytest.raises(ProviderError) as info,
    ):
        _fetch(server.base_url + "/chat/completions")
    assert info.value.retryable and info.value.kind == "connection"


def test_request_json_refuses_a_declared_huge_body() -> None:
    with (
        ScriptedOpenAI(faults=[Fault("huge", size=10 * 1024 * 1024)]) as server,
        pytest.raises(ProviderError) as info,
    ):
        _fetch(server.base_url + "/chat/completions", max_bytes=1024 * 1024)
    assert info.value.kind == "too_large" and not info.value.retryable
    assert "10485760 bytes" in str(info.value)


class _ChunkedHandler(BaseHTTPRequestHandler):
    """Streams an endless-looking chunked body with no Content-Length, counting what it sent."""

    protocol_version = "HTTP/1.1"
    sent = 0

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"a" * 65536
        try:
            self.wfile.write(b'7\r\n{"x": "\r\n')
            for _ in range(200):  # up to ~13 MB if nobody stops reading
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                type(self).sent += len(chunk)
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def chunked_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChunkedHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/x"
    finally:
        server.shutdown()
        server.server_close()


def test_request_json_stops_reading_an_undeclared_huge_body(chunked_url: str) -> None:
    with pytest.raises(ProviderError) as info:
        _fetch(chunked_url, max_bytes=256 * 1024)
    assert info.value.kind == "too_large" and "more than" in str(info.value)


def test_request_json_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bind, then close
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError) as info:
        _fetch(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert info.value.kind == "connect" and info.value.retryable


# How long a hung request is held before the server drops it. Only a client that ignores its
# timeout waits that long, and then it fails on the error it gets (a dropped connection), not on time.
HANG_S = 60


def test_request_json_gives_up_on_a_silent_server_after_its_timeout() -> None:
    with (
        ScriptedOpenAI(faults=[Fault("hang", delay_s=HANG_S)]) as server,
        pytest.raises(ProviderError) as info,
    ):
        _fetch(server.base_url + "/chat/completions", timeout=0.3)
    assert info.value.kind == "timeout" and info.value.retryable
    assert str(info.value).startswith("timed out waiting for the reply")


def test_client_pool_spreads_requests_over_small_clients() -> None:
    async def go() -> tuple[int, int]:
        pool = ClientPool(per_client=2, timeout=5)
        entered: list[httpx.AsyncClient] = []
        all_in, release = asyncio.Event(), asyncio.Event()

        async def hold() -> None:
            async with pool.client() as client:
                entered.append(client)
                if len(entered) == 5:
                    all_in.set()
                await release.wait()

        tasks = [asyncio.create_task(hold()) for _ in range(5)]
        await all_in.wait()  # all five hold a client at once
        release.set()
        await asyncio.gather(*tasks)
        size = pool.size
        async with pool.client() as reused:  # all idle now: no new client
            distinct = len({id(c) for c in entered})
            assert reused in entered
        await pool.aclose()
        return size, distinct

    size, distinct = asyncio.run(go())
    assert size == 3 and distinct == 3
