"""The provenance note of a comment rendered from another run's report (`comment-from`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stabilitygate.github.comment_from import provenance_note, triggering_run_url, with_note


def environ(tmp_path: Path, payload: object, **extra: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    return {"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": "o/r", **extra}


def test_the_run_is_linked_from_the_workflow_run_event(tmp_path: Path) -> None:
    env = environ(tmp_path, {"workflow_run": {"id": 99}}, GITHUB_SERVER_URL="https://ghe.example/")
    assert triggering_run_url(env) == "https://ghe.example/o/r/actions/runs/99"
    assert "[its own run](https://ghe.example/o/r/actions/runs/99)" in provenance_note(env)


@pytest.mark.parametrize(
    "payload",
    [{"workflow_run": {"id": "99)](https://evil.example"}}, {"workflow_run": {"id": True}}, {}, []],
)
def test_without_a_trustworthy_run_id_the_note_says_so_and_links_nothing(tmp_path: Path, payload: object) -> None:
    env = environ(tmp_path, payload)
    assert triggering_run_url(env) is None
    note = provenance_note(env)
    assert "this workflow's event names none" in note and "](" not in note


def test_a_server_url_that_could_break_the_link_is_not_used(tmp_path: Path) -> None:
    env = environ(tmp_path, {"workflow_run": {"id": 5}}, GITHUB_SERVER_URL="javascript:alert(1)")
    assert triggering_run_url(env) == "https://github.com/o/r/actions/runs/5"


def test_the_note_goes_right_after_the_marker_line() -> None:
    assert with_note("<!-- m -->\n## verdict\n", "> note\n") == "<!-- m -->\n> note\n\n## verdict\n"
