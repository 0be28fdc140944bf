"""What every HTTP provider shares: status and exception mapping, a size-bounded JSON fetch.

Every message built here is redacted: httpx exception text and error bodies can carry the URL,
query strings or a server echoing the Authorization header back.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json as jsonlib
import math
import ssl
import time
import urllib.parse
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

import httpx

from stabilitygate.providers.interface import FatalProviderError, ProviderError
from stabilitygate.secrets import Secrets, redact
from stabilitygate.typed_json import JSON

PREVIEW_CHARS = 300
#: An error message a provider's reply carries is shown this long, once redacted.
ERROR_MESSAGE_CHARS = PREVIEW_CHARS
# Error bodies are read only this far: enough for a message, never a memory problem.
ERROR_BODY_BYTES = 64 * 1024

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
#: What to check for each refusal, in the keys of an API provider (openai, anthropic); a provider with
#: other keys passes its own to `request_json` (the http provider: url, body), so a hint names keys it has.
FATAL_HINTS = {
    400: "request rejected (check params and messages)",
    401: "authentication refused (check the variable named by api_key_env)",
    403: "permission denied (the key may lack access to this model or endpoint)",
    404: "not found (check base_url and model)",
    405: "method not allowed (check base_url)",
    413: "request too large",
    422: "request not processable (check params and messages)",
}
RETRYABLE_HINTS = {
    408: "request timeout",
    409: "conflict",
    425: "too early",
    429: "rate limited",
}


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for the process, shared by every client (they are safe to share)."""
    return httpx.create_ssl_context()


class ClientPool:
    """Several small httpx.AsyncClients used as one, each request going to the least busy.

    httpcore's pool does O(connections^2) bookkeeping on every request, which at 64 connections
    costs ~25 ms of CPU per request and ruins concurrency; a few clients of `per_client`
    connections each keep that cost flat. Clients are added as the load grows, never beyond need.
    """

    def __init__(self, *, per_client: int = 8, **client_options: Any) -> None:
        self.per_client = per_client
        # Each new client would otherwise load the CA bundle again (~60 ms, blocking the event loop).
        client_options.setdefault("verify", default_ssl_context())
        self._options = client_options
        self._clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        """The least busy client for one request (a new one when all are full)."""
        index = min(range(len(self._busy)), key=self._busy.__getitem__, default=None)
        if index is None or self._busy[index] >= self.per_client:
            self._clients.append(httpx.AsyncClient(**self._options))
            self._busy.append(0)
            index = len(self._clients) - 1
        self._busy[index] += 1
        try:
            yield self._clients[index]
        finally:
            self._busy[index] -= 1

    @property
    def size(self) -> int:
        return len(self._clients)

    async def aclose(self) -> None:
        clients, self._clients, self._busy = self._clients, [], []
        for client in clients:
            await client.aclose()


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delay-seconds or HTTP-date); None when absent or bad.

    An HTTP-date is counted from `now` (a Unix time; the current time when None).
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def _preview(body: str, secrets: Iterable[str]) -> str:
    """The body redacted, then folded onto one line, then cut (never the other way round: a key that
    straddles the cut would keep all but its last characters, and one echoed across a line break would
    be two pieces a space apart)."""
    return Secrets.of(secrets).preview(body, PREVIEW_CHARS)


def error_for_status(
    status: int,
    body_preview: str,
    headers: Mapping[str, str],
    secrets: Iterable[str],
    *,
    url: str | None = None,
    hints: Mapping[int, str] = FATAL_HINTS,
    address_key: str = "base_url",
) -> ProviderError:
    """The typed error for an HTTP error status: retryable for 408/409/425/429/5xx, fatal for other 4xx.

    `hints` and `address_key`: what the provider's suite entry calls the things to check."""
    secrets = tuple(secrets)
    where = f"HTTP {status}" + (f" from {_safe_url(url, secrets)}" if url else "")
    preview = _preview(body_preview, secrets)
    detail = f" - {preview}" if preview else ""
    if status == 429 and "insufficient_quota" in body_preview:
        # OpenAI's "out of credit" is a 429 that no amount of waiting fixes.
        return FatalProviderError(f"{where}: quota exhausted{detail}", status=status, kind="http_429")
    if status in RETRYABLE_STATUSES or status >= 500:
        hint = RETRYABLE_HINTS.get(status, "server error")
        return ProviderError(
            f"{where}: {hint}{detail}",
            retryable=True,
            status=status,
            retry_after=parse_retry_after(_header(headers, "retry-after")),
            kind=f"http_{status}",
        )
    if 400 <= status < 500:
        hint = hints.get(status, "client error")
        return FatalProviderError(f"{where}: {hint}{detail}", status=status, kind=f"http_{status}")
    # 1xx/3xx that httpx did not resolve (e.g. a redirect we do not follow): not an answer, not fixable.
    return FatalProviderError(
        f"{where}: unexpected status (redirects are not followed; check {address_key}){detail}",
        status=status,
        kind=f"http_{status}",
    )


def _safe_url(url: str, secrets: Iterable[str]) -> str:
    """The URL without credentials or query string (keys sometimes travel in either)."""
    try:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        shown = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        shown = url
    return redact(shown, secrets)


_DNS_MARKERS = (
    "name or service not known",
    "nodename nor servname",
    "getaddrinfo",
    "name resolution",
    "no address associated",
)


def error_for_exception(exc: BaseException, secrets: Iterable[str]) -> ProviderError:
    """The typed error for a transport failure: timeouts, refused or unknown hosts, dropped connections."""
    secrets = tuple(secrets)
    if isinstance(exc, ProviderError):
        return exc
    text = str(exc) or type(exc).__name__
    where = ""
    if isinstance(exc, httpx.RequestError):
        try:
            where = f" ({exc.request.method} {_safe_url(str(exc.request.url), secrets)})"
        except RuntimeError:  # httpx raises when the exception has no request attached
            where = ""
    detail = Secrets.of(secrets).preview(text, ERROR_BODY_BYTES)
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        phases: dict[type[BaseException], str] = {
            httpx.ConnectTimeout: "connecting",
            httpx.ReadTimeout: "waiting for the reply",
            httpx.WriteTimeout: "sending the request",
            httpx.PoolTimeout: "waiting for a free connection",
        }
        phase = phases.get(type(exc), "waiting")
        return ProviderError(f"timed out {phase}{where}", retryable=True, kind="timeout")
    if isinstance(exc, httpx.ConnectError):
        if any(marker in text.lower() for marker in _DNS_MARKERS):
            return ProviderError(f"cannot resolve the host{where}: {detail}", retryable=True, kind="dns")
        return ProviderError(f"cannot connect{where}: {detail}", retryable=True, kind="connect")
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return FatalProviderError(f"bad URL{where}: {detail}", kind="bad_url")
    if isinstance(exc, httpx.TransportError):
        # RemoteProtocolError (peer closed mid-body), ReadError/WriteError (reset), ProxyError, ...
        return ProviderError(f"connection failed{where}: {detail}", retryable=True, kind="connection")
    if isinstance(exc, ConnectionError):
        return ProviderError(f"connection failed: {detail}", retryable=True, kind="connection")
    if isinstance(exc, httpx.HTTPError):
        return ProviderError(f"HTTP error{where}: {detail}", retryable=False, kind="error")
    return ProviderError(f"{type(exc).__name__}: {detail}", retryable=False, kind="error")


async def request_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json: object,
    headers: Mapping[str, str],
    secrets: Iterable[str],
    max_bytes: int = 8 * 1024 * 1024,
    hints: Mapping[int, str] = FATAL_HINTS,
    address_key: str = "base_url",
) -> JSON:
    """Send one request and return its parsed JSON body, or raise a typed, redacted ProviderError.

    The body is streamed and refused past `max_bytes`, so a runaway completion cannot exhaust memory.
    An error status's message names what to check in the provider's own keys (`hints`, `address_key`).
    """
    secrets = tuple(secrets)
    try:
        async with client.stream(method, url, json=json, headers=dict(headers)) as response:
            if response.status_code >= 300:
                preview = await _read_limited(response, ERROR_BODY_BYTES, truncate=True)
                raise error_for_status(
                    response.status_code,
                    preview.decode("utf-8", errors="replace"),
                    response.headers,
                    secrets,
                    url=url,
                    hints=hints,
                    address_key=address_key,
                )
            declared = response.headers.get("content-length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise _too_large(int(declared), max_bytes, url, secrets)
            body = await _read_limited(response, max_bytes, truncate=False, url=url, secrets=secrets)
    except ProviderError:
        raise
    except (httpx.HTTPError, OSError, TimeoutError) as exc:
        raise error_for_exception(exc, secrets) from exc
    try:
        parsed: JSON = jsonlib.loads(body)
        return parsed
    except (ValueError, UnicodeDecodeError) as exc:
        shown = _preview(body[:ERROR_BODY_BYTES].decode("utf-8", errors="replace"), secrets)
        raise ProviderError(
            f"the reply from {_safe_url(url, secrets)} is not JSON ({len(body)} bytes): {shown!r}",
            retryable=True,
            kind="bad_body",
        ) from exc


async def _read_limited(
    response: httpx.Response,
    limit: int,
    *,
    truncate: bool,
    url: str = "",
    secrets: tuple[str, ...] = (),
) -> bytes:
    """Read at most `limit` bytes; past it either keep the head (`truncate`) or refuse the body."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            if truncate:
                chunks.append(chunk[: len(chunk) - (size - limit)])
                break
            raise _too_large(size, limit, url, secrets, at_least=True)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int, limit: int, url: str, secrets: tuple[str, ...], *, at_least: bool = False) -> ProviderError:
    more = "more than " if at_least else ""
    return ProviderError(
        f"the reply from {_safe_url(url, secrets)} is {more}{size} bytes, over the {limit}-byte limit",
        retryable=False,
        kind="too_large",
    )
