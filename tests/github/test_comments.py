from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from stabilitygate.github.comments import (
    MAX_COMMENT_CHARS,
    CommentError,
    CommentForbidden,
    GitHubClient,
    find_marked_comment,
    fit_comment,
    upsert_sticky_comment,
)
from tests.support.github_server import FakeGitHub

TOKEN = "ghs_test_token_0123456789"
REPO = ("acme", "widgets")
PR = 7
MARKER = "<!-- stabilitygate:checkout -->"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def client_for(github: FakeGitHub, token: str = TOKEN) -> GitHubClient:
    return GitHubClient(token, api_url=github.api_url, backoff_s=0.01)


def body(text: str) -> str:
    return f"{MARKER}\n## llm-stability-gate: {text}\n"


def test_created_once_then_updated_across_pages(github: FakeGitHub) -> None:
    github.add_comments(PR, [f"review remark {i}" for i in range(150)])
    github.add_comments(PR + 1, [body("another PR's comment")])
    with client_for(github) as client:
        first = upsert_sticky_comment(client, REPO, PR, body("fail"))
        second = upsert_sticky_comment(client, REPO, PR, body("pass"))
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment_id == second.comment_id
    ours = [c for c in github.comments(PR) if c["body"].startswith(MARKER)]
    assert len(github.comments(PR)) == 151 and len(ours) == 1
    assert ours[0]["body"] == body("pass")
    assert len(github.writes("POST")) == 1 and len(github.writes("PATCH")) == 1
    assert github.writes("PATCH")[0].path == f"/repos/acme/widgets/issues/comments/{first.comment_id}"
    # The second run had to read page 2 (the comment is the 151st) with 100 comments a page.
    pages = [(r.query.get("per_page"), r.query.get("page")) for r in github.writes("GET")]
    assert pages == [(["100"], None), (["100"], ["2"]), (["100"], None), (["100"], ["2"])]
    assert {r.authorization for r in github.requests} == {f"Bearer {TOKEN}"}


def test_marker_must_start_the_body_and_name_this_suite(github: FakeGitHub) -> None:
    github.add_comments(
        PR,
        [
            f"> {MARKER} quoted by a reviewer",
            "<!-- stabilitygate:other-suite -->\nnot ours",
            f"I think {MARKER} is broken",
        ],
    )
    with client_for(github) as client:
        assert find_marked_comment(client, *REPO, PR, MARKER) is None
        result = upsert_sticky_comment(client, REPO, PR, body("pass"))
    assert result.action == "created"
    assert len(github.comments(PR)) == 4


def test_forbidden_write_is_comment_forbidden(github: FakeGitHub) -> None:
    github.forbid_writes = True
    with client_for(github) as client, pytest.raises(CommentForbidden) as caught:
        upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert caught.value.status == 403
    assert "Resource not accessible by integration" in str(caught.value)
    assert TOKEN not in str(caught.value)
    assert github.comments(PR) == []


def test_forbidden_update_is_comment_forbidden(github: FakeGitHub) -> None:
    github.add_comments(PR, [body("old")])
    github.forbid_writes = True
    with client_for(github) as client, pytest.raises(CommentForbidden):
        upsert_sticky_comment(client, REPO, PR, body("new"))
    assert github.comments(PR)[0]["body"] == body("old")


def test_unknown_repository_404_is_comment_forbidden(github: FakeGitHub) -> None:
    with client_for(github) as client, pytest.raises(CommentForbidden) as caught:
        upsert_sticky_comment(client, ("acme", "private-elsewhere"), PR, body("fail"))
    assert caught.value.status == 404


def test_bad_credentials_is_an_error_but_not_forbidden(github: FakeGitHub) -> None:
    with client_for(github, token="ghs_wrong") as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert not isinstance(caught.value, CommentForbidden)
    assert caught.value.status == 401 and "Bad credentials" in str(caught.value)
    assert "ghs_wrong" not in str(caught.value)


def test_server_errors_are_retried(github: FakeGitHub) -> None:
    github.fail_next([502, 503], method="GET")
    github.fail_next([500], method="PATCH")
    github.add_comments(PR, [body("old")])
    with client_for(github) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("new")).action == "updated"
    assert github.comments(PR)[0]["body"] == body("new")
    assert len(github.writes("GET")) == 3 and len(github.writes("PATCH")) == 2


def test_server_errors_give_up_after_the_retries(github: FakeGitHub) -> None:
    github.fail_next([500, 500, 500], method="GET")
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert caught.value.status == 500
    assert len(github.writes("GET")) == 3


def test_failed_post_searches_again_instead_of_posting_twice(github: FakeGitHub) -> None:
    # The comment is created but the answer is lost (a 502 from a proxy): no duplicate may follow.
    github.fail_next([502], method="POST", after_write=True)
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert result.action == "updated"
    assert len(github.comments(PR)) == 1
    assert len(github.writes("POST")) == 1


def test_failed_post_without_a_write_is_posted_again(github: FakeGitHub) -> None:
    github.fail_next([503], method="POST")
    with client_for(github) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("fail")).action == "created"
    assert len(github.comments(PR)) == 1 and len(github.writes("POST")) == 2


def test_unreachable_api_is_a_comment_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = GitHubClient(TOKEN, api_url=f"http://127.0.0.1:{port}", backoff_s=0.01)
    with client, pytest.raises(CommentError, match="ConnectError"):
        upsert_sticky_comment(client, REPO, PR, body("x"))


def test_api_url_with_a_path_prefix_and_trailing_slash() -> None:
    # GitHub Enterprise Server: GITHUB_API_URL is https://HOST/api/v3
    with FakeGitHub(token=TOKEN) as github, GitHubClient(TOKEN, api_url=github.api_url + "/") as client:
        assert client.api_url == github.api_url
        upsert_sticky_comment(client, REPO, PR, body("x"))
        assert github.writes("POST")[0].path == "/repos/acme/widgets/issues/7/comments"


def test_body_needs_a_marker_line(github: FakeGitHub) -> None:
    with client_for(github) as client, pytest.raises(ValueError):
        upsert_sticky_comment(client, REPO, PR, "\nno marker")


def test_overlong_comment_is_cut_to_githubs_limit(github: FakeGitHub) -> None:
    long_body = body("x") + "y" * (MAX_COMMENT_CHARS + 10)
    assert len(fit_comment(long_body)) == MAX_COMMENT_CHARS
    assert fit_comment(body("short")) == body("short")
    with client_for(github) as client:
        upsert_sticky_comment(client, REPO, PR, long_body)
    stored = github.comments(PR)[0]["body"]
    assert len(stored) == MAX_COMMENT_CHARS and stored.startswith(MARKER)
