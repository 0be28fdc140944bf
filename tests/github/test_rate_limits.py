"""Rate limits, waited out through the injected clock as GitHub says, or given up with their own hint."""

from __future__ import annotations

import email.utils

import httpx
import pytest

from stabilitygate.github.api_client import GitHubClient
from stabilitygate.github.api_errors import RATE_LIMIT_HINT, RateLimited, comment_warning
from stabilitygate.github.comments import upsert_sticky_comment
from stabilitygate.github.rate_limits import RateLimitWait, rate_limit_wait
from tests.support.github_client import NOW, PR, REPO, TOKEN, FakeTime, body, client_for
from tests.support.github_server import ACTIONS_BOT, FakeGitHub


def test_secondary_rate_limit_waits_retry_after_then_posts(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="create", retry_after=30)
    with client_for(github, clock) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("x"))
    assert result.action == "created" and clock.slept == [30.0]
    assert len(github.writes("POST")) == 2 and len(github.comments(PR)) == 1


def test_secondary_rate_limit_without_retry_after_backs_off_from_a_minute(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="list")
    github.secondary_rate_limit_next(on="list")
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("x")).action == "created"
    assert clock.slept == [60.0, 120.0]


def test_secondary_rate_limit_backoff_is_capped(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="list")
    github.secondary_rate_limit_next(on="list")
    with GitHubClient(TOKEN, api_url=github.api_url, sleep=clock.sleep, clock=clock.clock, max_wait_s=90) as client:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == [60.0, 90.0]


def test_a_rate_limit_that_lasts_gives_up_with_its_own_hint(github: FakeGitHub, clock: FakeTime) -> None:
    for _ in range(3):
        github.secondary_rate_limit_next(on="create")
    with client_for(github, clock) as client, pytest.raises(RateLimited) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == [60.0, 120.0]  # two retries, then it gives up
    assert caught.value.status == 403 and caught.value.hint == RATE_LIMIT_HINT
    warning = comment_warning(PR, caught.value)
    assert "secondary rate limit" in warning and "fork" not in warning
    assert github.comments(PR) == []


def test_primary_rate_limit_waits_until_the_reset(github: FakeGitHub, clock: FakeTime) -> None:
    github.primary_rate_limit_next(on="list", reset_at=int(NOW) + 90)
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("x")).action == "created"
    assert clock.slept == [91.0]  # until the reset, and a second for clock skew


def test_primary_rate_limit_far_off_is_not_waited_for(github: FakeGitHub, clock: FakeTime) -> None:
    github.primary_rate_limit_next(on="viewer", reset_at=int(NOW) + 3600, status=429)
    with client_for(github, clock) as client, pytest.raises(RateLimited) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == []
    assert caught.value.status == 429 and "wait 3601 s" in str(caught.value)
    assert github.comments(PR) == []


def test_429_without_headers_is_a_secondary_limit(github: FakeGitHub, clock: FakeTime) -> None:
    github.fail_next([429], on="edit")
    github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("new")).action == "updated"
    assert clock.slept == [60.0] and github.comments(PR)[0]["body"] == body("new")


# ---- the rule itself, on GitHub's answers


def test_retry_after_may_be_an_http_date() -> None:
    response = httpx.Response(403, headers={"retry-after": email.utils.formatdate(NOW + 45, usegmt=True)})
    assert rate_limit_wait(response, 0, NOW) == RateLimitWait(45.0, exact=True)


def test_a_403_is_a_rate_limit_only_when_github_says_so() -> None:
    assert rate_limit_wait(httpx.Response(403, json={"message": "Must have admin rights"}), 0, NOW) is None
    limited = httpx.Response(403, json={"message": "You have exceeded a secondary rate limit."})
    assert rate_limit_wait(limited, 1, NOW) == RateLimitWait(120.0, exact=False)
    assert rate_limit_wait(httpx.Response(500), 0, NOW) is None
