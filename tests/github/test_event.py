from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.github.event import pull_request_number, repository


def env_for(tmp_path: Path, name: str, payload: Any) -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(path)}


@pytest.mark.parametrize("name", ["pull_request", "pull_request_target"])
def test_pull_request_events(tmp_path: Path, name: str) -> None:
    payload = {"action": "synchronize", "number": 42, "pull_request": {"number": 42, "head": {"sha": "abc"}}}
    assert pull_request_number(env_for(tmp_path, name, payload)) == 42


def test_top_level_number_when_the_pull_request_object_lacks_it(tmp_path: Path) -> None:
    assert pull_request_number(env_for(tmp_path, "pull_request", {"number": 5, "pull_request": {}})) == 5


def test_issue_comment_on_a_pull_request(tmp_path: Path) -> None:
    payload = {"issue": {"number": 9, "pull_request": {"url": "https://api.github.com/repos/a/b/pulls/9"}}}
    assert pull_request_number(env_for(tmp_path, "issue_comment", payload)) == 9


def test_issue_comment_on_a_plain_issue(tmp_path: Path) -> None:
    assert pull_request_number(env_for(tmp_path, "issue_comment", {"issue": {"number": 9}})) is None


@pytest.mark.parametrize("name", ["push", "workflow_dispatch", "schedule", "workflow_run"])
def test_other_events_have_no_pull_request(tmp_path: Path, name: str) -> None:
    # A workflow_run payload carries pull_requests too, but the comment there is the fork-safe workflow's job.
    payload = {"number": 3, "pull_request": {"number": 3}, "workflow_run": {"pull_requests": [{"number": 3}]}}
    assert pull_request_number(env_for(tmp_path, name, payload)) is None


def test_missing_or_broken_payload_is_no_pull_request(tmp_path: Path) -> None:
    assert pull_request_number({"GITHUB_EVENT_NAME": "pull_request"}) is None
    assert pull_request_number({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(tmp_path / "x")}) is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert pull_request_number({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(broken)}) is None
    assert pull_request_number(env_for(tmp_path, "pull_request", ["a list"])) is None
    assert pull_request_number(env_for(tmp_path, "pull_request", {"number": "7"})) is None
    assert pull_request_number(env_for(tmp_path, "pull_request", {"number": True})) is None


def test_repository() -> None:
    assert repository({"GITHUB_REPOSITORY": "octo/hello-world"}) == ("octo", "hello-world")
    for bad in ("", "octo", "octo/", "/x", "a/b/c"):
        assert repository({"GITHUB_REPOSITORY": bad}) is None
    assert repository({}) is None
