"""What the tests of the GitHub client and the sticky comment share: a client bound to a FakeGitHub.

The client's sleep and clock are a `FakeTime`, so rate-limit and back-off waits run at once and are
recorded; `body` builds a comment body that starts with this suite's marker line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stabilitygate.github.api_client import GitHubClient
from tests.support.github_server import FakeGitHub

TOKEN = "ghs_test_token_0123456789"
PAT = "ghp_person_token_9876543210"
REPO = ("acme", "widgets")
PR = 7
MARKER = "<!-- stabilitygate:checkout -->"
NOW = 1_700_000_000.0


@dataclass
class FakeTime:
    """The client's sleep and clock: sleeping only moves the clock, and every wait is recorded."""

    now: float = NOW
    slept: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def client_for(github: FakeGitHub, clock: FakeTime | None = None, token: str = TOKEN) -> GitHubClient:
    time = clock or FakeTime()
    return GitHubClient(token, api_url=github.api_url, sleep=time.sleep, clock=time.clock)


def body(text: str) -> str:
    return f"{MARKER}\n## llm-stability-gate: {text}\n"


def marked(github: FakeGitHub) -> list[dict[str, object]]:
    return [c for c in github.comments(PR) if str(c["body"]).startswith(MARKER)]
