"""The client: server errors and the network retried with back-off, the API URL and its GraphQL endpoint."""

from __future__ import annotations

import socket

import httpx
import pytest
from pydantic import TypeAdapter

from stabilitygate.github.api_client import GitHubClient, decode_json, graphql_url_for, validate_answer
from stabilitygate.github.api_errors import CommentError
from stabilitygate.github.comment_thread import Comment
from stabilitygate.github.comments import upsert_sticky_comment
from tests.support.github_client import PR, REPO, TOKEN, FakeTime, body, client_for
from tests.support.github_server import ACTIONS_BOT, FakeGitHub


def test_server_errors_are_retried(github: FakeGitHub, clock: FakeTime) -> None:
    github.fail_next([502, 503], on="list")
    github.fail_next([500], on="edit")
    github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("new")).action == "updated"
    assert github.comments(PR)[0]["body"] == body("new")
    assert len(github.writes("GET")) == 3 and len(github.writes("PATCH")) == 2
    assert clock.slept == [1.0, 2.0, 1.0]  # backoff doubles per request


def test_server_errors_give_up_after_the_retries(github: FakeGitHub) -> None:
    github.fail_next([500, 500, 500], on="list")
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert caught.value.status == 500
    assert len(github.writes("GET")) == 3


def test_unreachable_api_is_a_comment_error(clock: FakeTime) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = GitHubClient(TOKEN, api_url=f"http://127.0.0.1:{port}", sleep=clock.sleep, clock=clock.clock)
    with client, pytest.raises(CommentError, match="ConnectError") as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert caught.value.__cause__ is not None and clock.slept == [1.0, 2.0]


def test_api_url_with_a_path_prefix_and_trailing_slash() -> None:
    # GitHub Enterprise Server: GITHUB_API_URL is https://HOST/api/v3, GraphQL is https://HOST/api/graphql
    assert graphql_url_for("https://ghe.example.com/api/v3/") == "https://ghe.example.com/api/graphql"
    assert graphql_url_for("https://api.github.com") == "https://api.github.com/graphql"
    with FakeGitHub(token=TOKEN) as github, GitHubClient(TOKEN, api_url=github.api_url + "/") as client:
        assert client.api_url == github.api_url
        upsert_sticky_comment(client, REPO, PR, body("x"))
        assert github.writes("POST")[0].path == "/repos/acme/widgets/issues/7/comments"
        assert github.graphql_calls("viewer")[0].path == "/graphql"


# ---- answers parsed at the edge


def test_an_answer_that_is_not_json_is_a_comment_error() -> None:
    with pytest.raises(CommentError, match=r"^GET /user: the answer is not JSON$") as caught:
        decode_json(httpx.Response(200, text="<html>a proxy's page</html>"), "GET /user")
    assert isinstance(caught.value.__cause__, ValueError)


def test_an_answer_of_another_shape_names_the_field() -> None:
    with pytest.raises(CommentError, match=r"^GET /x: unexpected answer \(0\.id: ") as caught:
        validate_answer(TypeAdapter(list[Comment]), [{"body": "no id"}], "GET /x")
    assert caught.value.status is None and caught.value.__cause__ is not None
