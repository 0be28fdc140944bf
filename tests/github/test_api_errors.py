"""GitHub's refusals as errors: the hint that names the cause, and the one-line warning."""

from __future__ import annotations

import pytest

from stabilitygate.github.api_errors import (
    BAD_CREDENTIALS_HINT,
    FORK_HINT,
    NOT_FOUND_HINT,
    PERMISSION_HINT,
    CommentError,
    CommentForbidden,
    RateLimited,
    comment_warning,
)
from stabilitygate.github.comments import upsert_sticky_comment
from tests.support.github_client import PR, REPO, TOKEN, body, client_for
from tests.support.github_server import FakeGitHub


def test_forbidden_write_names_the_fork_cause(github: FakeGitHub) -> None:
    github.forbid_writes = True
    with client_for(github) as client, pytest.raises(CommentForbidden) as caught:
        upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert caught.value.status == 403 and caught.value.hint == FORK_HINT
    assert "Resource not accessible by integration" in str(caught.value)
    warning = comment_warning(PR, caught.value)
    assert warning.startswith("could not comment on pull request #7 (POST /repos/acme/widgets/issues/7/comments")
    assert "403" in warning and "read-only" in warning and "stability-fork-safe.yml" in warning
    assert "\n" not in warning and TOKEN not in warning
    assert github.comments(PR) == []


def test_other_403_is_a_permission_error_not_the_fork_hint(github: FakeGitHub) -> None:
    github.fail_next([403], on="create")
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert not isinstance(caught.value, (CommentForbidden, RateLimited))
    assert caught.value.hint == PERMISSION_HINT and "fork" not in comment_warning(PR, caught.value)
    assert len(github.writes("POST")) == 1 and github.comments(PR) == []


def test_unknown_repository_404_is_not_the_fork_hint(github: FakeGitHub) -> None:
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, ("acme", "private-elsewhere"), PR, body("fail"))
    assert not isinstance(caught.value, CommentForbidden)
    assert caught.value.status == 404 and caught.value.hint == NOT_FOUND_HINT
    assert "fork" not in comment_warning(PR, caught.value)


def test_bad_credentials_is_an_error_but_not_forbidden(github: FakeGitHub) -> None:
    with client_for(github, token="ghs_wrong") as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert not isinstance(caught.value, CommentForbidden)
    assert caught.value.status == 401 and "Bad credentials" in str(caught.value)
    assert caught.value.hint == BAD_CREDENTIALS_HINT
    assert "ghs_wrong" not in comment_warning(PR, caught.value)
    assert [r.route for r in github.requests] == ["graphql"]  # no GET /user fallback after a 401


def test_warning_without_a_hint_is_one_plain_line() -> None:
    assert comment_warning(3, CommentError("GET /x answered HTTP 500")) == (
        "could not comment on pull request #3: GET /x answered HTTP 500"
    )
