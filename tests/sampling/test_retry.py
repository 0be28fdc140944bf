"""Backoff: full jitter, Retry-After honoured and capped."""

from __future__ import annotations

import asyncio

import pytest

from stabilitygate.sampling.retry import Backoff
from stabilitygate.suite.model import Sampling


def test_full_jitter_draws_up_to_the_exponential_ceiling() -> None:
    top = Backoff(base_s=0.5, max_wait_s=60, random=lambda: 1.0)
    half = Backoff(base_s=0.5, max_wait_s=60, random=lambda: 0.5)
    assert [top.delay(n) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert [half.delay(n) for n in range(3)] == [0.25, 0.5, 1.0]
    assert Backoff(random=lambda: 0.0).delay(3) == 0.0


def test_ceiling_is_capped_and_huge_attempts_do_not_overflow() -> None:
    backoff = Backoff(base_s=0.5, max_wait_s=3, random=lambda: 1.0)
    assert backoff.delay(10) == 3 and backoff.delay(10_000) == 3


def test_retry_after_is_honoured_exactly_and_capped() -> None:
    backoff = Backoff(base_s=0.5, max_wait_s=2, random=lambda: 1.0)
    assert backoff.delay(0, retry_after=0.05) == 0.05
    assert backoff.delay(4, retry_after=0.0) == 0.0
    assert backoff.delay(0, retry_after=120) == 2
    assert backoff.delay(1, retry_after=-1) == 1.0  # nonsense falls back to the jittered backoff


def test_from_sampling_takes_the_cap_from_the_suite() -> None:
    backoff = Backoff.from_sampling(Sampling(max_retry_wait_s=7), base_s=0.1)
    assert backoff.max_wait_s == 7 and backoff.base_s == 0.1


def test_wait_sleeps_with_the_injected_sleep() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    backoff = Backoff(base_s=1, max_wait_s=10, random=lambda: 0.5, sleep=sleep)
    waited = asyncio.run(backoff.wait(2))
    assert waited == 2.0 and slept == [2.0]
    assert asyncio.run(backoff.wait(0, retry_after=30)) == 10 and slept == [2.0, 10]


def test_default_random_stays_within_the_ceiling() -> None:
    backoff = Backoff(base_s=0.1, max_wait_s=1)
    draws = [backoff.delay(2) for _ in range(200)]
    assert all(0 <= d <= 0.4 for d in draws) and len(set(draws)) > 100
    assert pytest.approx(sum(draws) / len(draws), abs=0.08) == 0.2
