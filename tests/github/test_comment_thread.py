"""Which comments the gate owns: the token's own, starting with the marker line, not minimized."""

from __future__ import annotations

from stabilitygate.github.comment_thread import PullRequest, own_marked_comments
from stabilitygate.github.comments import upsert_sticky_comment
from tests.support.github_client import MARKER, PAT, PR, REPO, body, client_for
from tests.support.github_server import ACTIONS_BOT, FakeGitHub


def test_marker_must_start_the_body_and_name_this_suite(github: FakeGitHub) -> None:
    github.add_comments(
        PR,
        [
            f"> {MARKER} quoted by a reviewer",
            "<!-- stabilitygate:other-suite -->\nnot ours",
            f"I think {MARKER} is broken",
        ],
        login=ACTIONS_BOT,
    )
    with client_for(github) as client:
        pr = PullRequest(client.api_url, *REPO, PR)
        assert own_marked_comments(client, pr, MARKER, ACTIONS_BOT) == []
        result = upsert_sticky_comment(client, REPO, PR, body("pass"))
    assert result.action == "created"
    assert len(github.comments(PR)) == 4


def test_a_persons_comment_with_the_marker_is_never_edited(github: FakeGitHub) -> None:
    # A person pasted the marker; a token with write access could edit their comment: it must not.
    (pasted,) = github.add_comments(PR, [body("pasted by a person")], login="octocat")
    (other_app,) = github.add_comments(PR, [body("another app's")], login="some-other-app[bot]")
    with client_for(github) as client:
        first = upsert_sticky_comment(client, REPO, PR, body("fail"))
        second = upsert_sticky_comment(client, REPO, PR, body("pass"))
    assert first.action == "created" and second.action == "updated"
    assert first.comment_id not in (pasted, other_app) and second.comment_id == first.comment_id
    by_id = {c["id"]: c for c in github.comments(PR)}
    assert by_id[pasted]["body"] == body("pasted by a person")
    assert by_id[other_app]["body"] == body("another app's")
    assert by_id[first.comment_id]["body"] == body("pass")
    assert {r.path for r in github.writes("PATCH")} == {f"/repos/acme/widgets/issues/comments/{first.comment_id}"}


def test_a_minimized_comment_is_left_alone_and_a_new_one_made(github: FakeGitHub) -> None:
    (hidden,) = github.add_comments(PR, [body("old, hidden by a maintainer")], login=ACTIONS_BOT)
    github.minimize(hidden)
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert result.action == "created" and result.comment_id != hidden
    by_id = {c["id"]: c for c in github.comments(PR)}
    assert by_id[hidden]["body"] == body("old, hidden by a maintainer") and github.is_minimized(hidden)
    assert by_id[result.comment_id]["body"] == body("new")
    assert github.writes("PATCH") == [] and github.writes("DELETE") == []
    # Whether a comment is minimized is asked of GraphQL, for the candidates only.
    asked = [r.body["variables"]["ids"] for r in github.graphql_calls("nodes(")]
    assert asked[0] == [f"IC_kwDOfake{hidden}"]


def test_a_personal_token_owns_its_persons_comments(github: FakeGitHub) -> None:
    github.add_token(PAT, "octocat", app=False)
    (persons,) = github.add_comments(PR, [body("octocat's earlier run")], login="octocat")
    (bots,) = github.add_comments(PR, [body("the workflow token's")], login=ACTIONS_BOT)
    with client_for(github, token=PAT) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert (result.action, result.comment_id) == ("updated", persons)
    assert {c["id"]: c["body"] for c in github.comments(PR)} == {
        persons: body("new"),
        bots: body("the workflow token's"),
    }
