"""The token's account: from GraphQL `viewer`, from GET /user where GraphQL cannot say, or given."""

from __future__ import annotations

import pytest

from stabilitygate.github.api_errors import CommentError, CommentForbidden, comment_warning
from stabilitygate.github.comments import upsert_sticky_comment
from tests.support.github_client import PAT, PR, REPO, body, client_for
from tests.support.github_server import ACTIONS_BOT, FakeGitHub


def test_without_graphql_a_personal_token_is_known_by_get_user(github: FakeGitHub) -> None:
    github.add_token(PAT, "octocat", app=False)
    github.fail_next([404], on="viewer")
    with client_for(github, token=PAT) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert result.action == "created"
    assert [r.path for r in github.requests if r.route == "user"] == ["/user"]
    assert github.comments(PR)[0]["user"]["login"] == "octocat"


def test_an_installation_token_that_graphql_cannot_name_posts_nothing(github: FakeGitHub) -> None:
    github.fail_next([404], on="viewer")  # and GET /user refuses installation tokens, as on GitHub
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("new"))
    assert not isinstance(caught.value, CommentForbidden)
    assert "could not learn which account the token is" in str(caught.value)
    assert "fork" not in comment_warning(PR, caught.value)
    assert github.comments(PR) == [] and github.writes("POST") == []


def test_a_known_login_skips_the_lookup(github: FakeGitHub) -> None:
    with client_for(github) as client:
        upsert_sticky_comment(client, REPO, PR, body("x"), login=ACTIONS_BOT)
    assert github.graphql_calls("viewer") == [] and len(github.comments(PR)) == 1
