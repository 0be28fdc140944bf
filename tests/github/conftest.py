"""Fixtures of the comment-code tests: the GitHub-shaped server on loopback and a fake clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.github_client import TOKEN, FakeTime
from tests.support.github_server import FakeGitHub


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """The GitHub-shaped API, answering TOKEN as github-actions[bot] (test modules may override it)."""
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def clock() -> FakeTime:
    """Waits go through this clock: no test sleeps for real."""
    return FakeTime()
