"""How long a rate-limited GitHub request must wait, by the rules of GitHub's REST documentation.

GitHub names a limit's end with `retry-after`, or with `x-ratelimit-reset` once
`x-ratelimit-remaining` is 0; a secondary limit that names none is waited out from a minute,
doubling each retry. Whether a wait is worth it is the client's call (`GitHubClient.max_wait_s`).
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass

import httpx

from stabilitygate.github.api_errors import github_message

#: GitHub's rule for a secondary rate limit without `retry-after`: wait at least a minute, then longer.
SECONDARY_LIMIT_WAIT_S = 60.0
#: Added to a wait until `x-ratelimit-reset`: the runner's clock and GitHub's may differ a little.
RESET_MARGIN_S = 1.0


@dataclass(frozen=True)
class RateLimitWait:
    """How long a rate-limited request must wait; `exact` when GitHub named the time itself."""

    seconds: float
    exact: bool


def rate_limit_wait(response: httpx.Response, retry: int, now: float) -> RateLimitWait | None:
    """The wait before sending a rate-limited request again (its `retry`-th retry); None if it is no rate limit.

    GitHub's rules: wait `retry-after` seconds; else, with `x-ratelimit-remaining: 0`, until the
    `x-ratelimit-reset` epoch second; else (a secondary limit) at least a minute, doubling each retry.
    """
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    after = _retry_after_s(headers.get("retry-after"), now)
    if after is not None:
        return RateLimitWait(after, exact=True)
    reset = headers.get("x-ratelimit-reset", "")
    if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return RateLimitWait(max(int(reset) - now, 0.0) + RESET_MARGIN_S, exact=True)
    if response.status_code == 429 or "rate limit" in github_message(response).casefold():
        return RateLimitWait(SECONDARY_LIMIT_WAIT_S * 2**retry, exact=False)
    return None


def _retry_after_s(value: str | None, now: float) -> float | None:
    """`retry-after` in seconds: GitHub sends a number; HTTP also allows a date."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - now, 0.0)
