"""When to try a failed request again: exponential backoff with full jitter, or the server's Retry-After.

Full jitter (a uniform wait in [0, base * 2^attempt]) spreads the retries of many concurrent
samples instead of sending them back in one burst; a Retry-After the server gave wins, capped so
that one misbehaving header cannot stall the run.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from stabilitygate.suite.model import Sampling

DEFAULT_BASE_S = 0.5


@dataclass(frozen=True)
class Backoff:
    """The wait before retry number `attempt + 1`; `random` and `sleep` are injectable for tests."""

    base_s: float = DEFAULT_BASE_S
    max_wait_s: float = 60.0
    random: Callable[[], float] = field(default=random.random, repr=False)
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)

    @classmethod
    def from_sampling(cls, sampling: Sampling, *, base_s: float = DEFAULT_BASE_S) -> Backoff:
        return cls(base_s=base_s, max_wait_s=sampling.max_retry_wait_s)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_wait_s)
        ceiling = min(self.max_wait_s, self.base_s * 2.0 ** min(attempt, 62))
        return self.random() * ceiling

    async def wait(self, attempt: int, retry_after: float | None = None) -> float:
        """Sleep for `delay(attempt, retry_after)` and return how long that was."""
        seconds = self.delay(attempt, retry_after)
        await self.sleep(seconds)
        return seconds
