"""A small synchronous client for GitHub's REST and GraphQL APIs.

It sends the auth headers, retries server errors and transport failures, and waits out rate limits
as long as `github/rate_limits.py` says; every refusal becomes a `CommentError` (see
`github/api_errors.py`). Answers are parsed at this edge: `decode_json` and `validate_answer` turn
a body that is not what GitHub sends into a `CommentError` too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

from stabilitygate.github.api_errors import (
    NOT_ACCESSIBLE,
    CommentError,
    CommentForbidden,
    RateLimited,
    http_error,
    shown_url,
)
from stabilitygate.github.rate_limits import RateLimitWait, rate_limit_wait
from stabilitygate.version import TOOL_NAME, __version__

DEFAULT_API_URL = "https://api.github.com"

Sleep = Callable[[float], None]
Clock = Callable[[], float]


# ---- what GitHub answers, parsed at the edge


class Answer(BaseModel):
    """The base of every model of a GitHub answer: frozen, and blind to the fields the gate does not read."""

    model_config = ConfigDict(frozen=True)


class _GraphQLError(Answer):
    message: str = ""
    type: str | None = None


class _GraphQLAnswer(Answer):
    data: dict[str, JsonValue] | None = None
    errors: list[_GraphQLError] | None = None


_GRAPHQL_ANSWER = TypeAdapter(_GraphQLAnswer)
_Parsed = TypeVar("_Parsed")


def decode_json(response: httpx.Response, what: str) -> object:
    """The answer's JSON; `what` names the request in the error when it is not JSON."""
    try:
        return response.json()
    except ValueError as exc:
        raise CommentError(f"{what}: the answer is not JSON") from exc


def validate_answer(adapter: TypeAdapter[_Parsed], data: object, what: str) -> _Parsed:
    """The answer as `adapter` types it; its first problem, located, when it is not the shape GitHub sends."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the answer"
        raise CommentError(f"{what}: unexpected answer ({where}: {first['msg']})") from exc


# ---- the client


def graphql_url_for(api_url: str) -> str:
    """GitHub's GraphQL endpoint beside its REST API: `API/graphql`, or `HOST/api/graphql` on Enterprise Server."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base.removesuffix("/v3") + "/graphql"
    return base + "/graphql"


class GitHubClient:
    """A small synchronous REST and GraphQL client: auth headers, timeouts, retries and rate limits.

    Every wait goes through `sleep`, and `clock` (epoch seconds) dates `x-ratelimit-reset`, so
    that tests can run the waits without waiting.
    """

    def __init__(
        self,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        graphql_url: str | None = None,
        retries: int = 2,
        backoff_s: float = 1.0,
        rate_limit_retries: int = 2,
        max_wait_s: float = 300.0,
        timeout_s: float = 20.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: Clock = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.graphql_url = graphql_url or graphql_url_for(self.api_url)
        self.retries = retries
        self.backoff_s = backoff_s
        self.rate_limit_retries = rate_limit_retries
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.clock = clock
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
            follow_redirects=False,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"{TOOL_NAME}/{__version__}",
            },
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request(self, method: str, url: str, *, json: object = None, retry: bool = True) -> httpx.Response:
        """Send one request; return its answer below 400, or raise CommentError.

        A rate-limited request was refused unprocessed, so it is always waited out and sent again,
        within `rate_limit_retries` and `max_wait_s`. 5xx answers and transport errors are retried
        only with `retry`: a failed POST may still have been processed.
        """
        failures = limited = 0
        while True:
            try:
                response = self._client.request(method, url, json=json)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                if not retry or failures >= self.retries:
                    raise CommentError(f"{method} {shown_url(url)}: {type(exc).__name__}: {exc}") from exc
                self.back_off(failures)
                failures += 1
                continue
            if response.status_code < 400:
                return response
            wait = rate_limit_wait(response, limited, self.clock())
            if wait is not None:
                self._wait_out(wait, limited, http_error(method, url, response))
                limited += 1
                continue
            if retry and response.status_code >= 500 and failures < self.retries:
                self.back_off(failures)
                failures += 1
                continue
            raise http_error(method, url, response)

    def graphql(self, query: str, variables: Mapping[str, object] | None = None) -> dict[str, JsonValue]:
        """The `data` of a GraphQL answer; GraphQL's own errors (HTTP 200) raise CommentError too."""
        response = self.request("POST", self.graphql_url, json={"query": query, "variables": dict(variables or {})})
        answer = validate_answer(_GRAPHQL_ANSWER, decode_json(response, "GraphQL"), "GraphQL")
        if answer.errors:
            raise _graphql_error(answer.errors, response.status_code)
        return answer.data or {}

    def back_off(self, attempt: int) -> None:
        """The pause before retrying after a server error: `backoff_s`, doubling each attempt."""
        self.sleep(self.backoff_s * 2**attempt)

    def _wait_out(self, wait: RateLimitWait, limited: int, refused: CommentError) -> None:
        """Sleep through a rate limit, or raise RateLimited when the retries or the wait are too many."""
        seconds = wait.seconds if wait.exact else min(wait.seconds, self.max_wait_s)
        if limited >= self.rate_limit_retries or seconds > self.max_wait_s:
            status = refused.status if refused.status is not None else 429
            raise RateLimited(f"{refused}; GitHub asks to wait {seconds:.0f} s", status=status) from refused
        self.sleep(seconds)


def _graphql_error(errors: Sequence[_GraphQLError], status: int) -> CommentError:
    text = "; ".join(" ".join(e.message.split()) for e in errors)[:300] or "no message"
    message = f"POST /graphql answered {text}"
    if any(e.type == "RATE_LIMITED" for e in errors):
        return RateLimited(message, status=status)
    if any(NOT_ACCESSIBLE.casefold() in e.message.casefold() for e in errors):
        return CommentForbidden(message)
    return CommentError(message, status=status)
