"""The sticky comment: created once, updated after, exactly one left after a race, never half written."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from stabilitygate.github.api_errors import CommentError, CommentForbidden
from stabilitygate.github.comments import MAX_COMMENT_CHARS, CommentResult, fit_comment, upsert_sticky_comment
from tests.support.github_client import MARKER, PR, REPO, TOKEN, body, client_for, marked
from tests.support.github_server import ACTIONS_BOT, FakeGitHub

# ---- created once, updated after


def test_created_once_then_updated_across_pages(github: FakeGitHub) -> None:
    github.add_comments(PR, [f"review remark {i}" for i in range(150)])
    github.add_comments(PR + 1, [body("another PR's comment")], login=ACTIONS_BOT)
    with client_for(github) as client:
        first = upsert_sticky_comment(client, REPO, PR, body("fail"))
        second = upsert_sticky_comment(client, REPO, PR, body("pass"))
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment_id == second.comment_id
    ours = marked(github)
    assert len(github.comments(PR)) == 151 and len(ours) == 1
    assert ours[0]["body"] == body("pass") and ours[0]["user"] == {"login": ACTIONS_BOT, "type": "Bot"}
    assert len(github.writes("POST")) == 1 and len(github.writes("PATCH")) == 1
    assert github.writes("DELETE") == []
    assert github.writes("PATCH")[0].path == f"/repos/acme/widgets/issues/comments/{first.comment_id}"
    # Each listing reads page 2 (the comment is the 151st): before the POST, after it, before the PATCH.
    pages = [(r.query.get("per_page"), r.query.get("page")) for r in github.writes("GET")]
    assert pages == [(["100"], None), (["100"], ["2"])] * 3
    assert {r.authorization for r in github.requests} == {f"Bearer {TOKEN}"}
    assert len(github.graphql_calls("viewer")) == 2  # once a run
    assert first.url is not None and first.url.endswith(f"#issuecomment-{first.comment_id}")


def test_body_needs_a_marker_line(github: FakeGitHub) -> None:
    with client_for(github) as client, pytest.raises(ValueError):
        upsert_sticky_comment(client, REPO, PR, "\nno marker")
    assert github.requests == []


def test_overlong_comment_is_cut_to_githubs_limit(github: FakeGitHub) -> None:
    long_body = body("x") + "y" * (MAX_COMMENT_CHARS + 10)
    assert len(fit_comment(long_body)) == MAX_COMMENT_CHARS
    assert fit_comment(body("short")) == body("short")
    with client_for(github) as client:
        upsert_sticky_comment(client, REPO, PR, long_body)
    stored = github.comments(PR)[0]["body"]
    assert len(stored) == MAX_COMMENT_CHARS and stored.startswith(MARKER)


# ---- duplicates: two runs at once leave exactly one


def test_two_runs_creating_at_once_leave_exactly_one(github: FakeGitHub) -> None:
    github.add_comments(PR, ["a review remark"])
    # Both POSTs are held until both arrive: each run listed before either comment existed.
    github.hold_creates(2)
    bodies = [body("run A"), body("run B")]

    def run(text: str) -> CommentResult:
        with client_for(github) as client:
            return upsert_sticky_comment(client, REPO, PR, text)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, bodies))
    assert len(github.writes("POST")) == 2  # both did create one
    ours = marked(github)
    assert len(ours) == 1 and ours[0]["body"] in bodies
    assert {r.comment_id for r in results} == {ours[0]["id"]}
    assert sorted(r.action for r in results) == ["created", "updated"]
    assert all(r.duplicates_left == () for r in results)
    assert len(github.comments(PR)) == 2  # the review remark is untouched


def test_a_duplicate_from_an_earlier_race_is_removed(github: FakeGitHub) -> None:
    older, younger = github.add_comments(PR, [body("first"), body("second")], login=ACTIONS_BOT)
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert (result.action, result.comment_id, result.duplicates_left) == ("updated", older, ())
    assert [(c["id"], c["body"]) for c in github.comments(PR)] == [(older, body("new"))]
    assert [r.path for r in github.writes("DELETE")] == [f"/repos/acme/widgets/issues/comments/{younger}"]


def test_a_duplicate_that_cannot_be_deleted_is_minimized(github: FakeGitHub) -> None:
    older, younger = github.add_comments(PR, [body("first"), body("second")], login=ACTIONS_BOT)
    github.fail_next([403], on="delete")
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
        later = upsert_sticky_comment(client, REPO, PR, body("newer"))
    assert result.duplicates_left == () and github.is_minimized(younger)
    assert len(github.graphql_calls("minimizeComment")) == 1
    # Minimized, it is no longer the gate's: the next run neither edits nor deletes it.
    assert (later.comment_id, later.duplicates_left) == (older, ())
    assert {c["id"]: c["body"] for c in github.comments(PR)} == {older: body("newer"), younger: body("second")}


def test_a_duplicate_that_can_be_neither_deleted_nor_hidden_is_reported(github: FakeGitHub) -> None:
    older, younger = github.add_comments(PR, [body("first"), body("second")], login=ACTIONS_BOT)
    github.fail_next([403], on="delete")
    github.fail_next([403], on="minimize")
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert (result.action, result.comment_id, result.duplicates_left) == ("updated", older, (younger,))
    assert {c["id"]: c["body"] for c in github.comments(PR)}[older] == body("new")


# ---- a comment that vanishes, failed writes


def test_a_comment_deleted_between_listing_and_patch_is_created_anew(github: FakeGitHub) -> None:
    (old,) = github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    github.vanish_before_next_edit()
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("new"))
    assert result.action == "created" and result.comment_id != old
    assert [(c["id"], c["body"]) for c in github.comments(PR)] == [(result.comment_id, body("new"))]
    assert len(github.writes("PATCH")) == 1 and len(github.writes("POST")) == 1


def test_a_comment_that_answers_404_to_every_patch_gives_up(github: FakeGitHub) -> None:
    (old,) = github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    github.fail_next([404, 404, 404], on="edit")
    with client_for(github) as client, pytest.raises(CommentError) as caught:
        upsert_sticky_comment(client, REPO, PR, body("new"))
    assert caught.value.status == 404 and str(old) in str(caught.value)
    assert github.writes("POST") == [] and github.comments(PR)[0]["body"] == body("old")


def test_forbidden_update_leaves_the_previous_comment(github: FakeGitHub) -> None:
    github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    github.forbid_writes = True
    with client_for(github) as client, pytest.raises(CommentForbidden):
        upsert_sticky_comment(client, REPO, PR, body("new"))
    assert github.comments(PR)[0]["body"] == body("old")


def test_failed_post_searches_again_instead_of_posting_twice(github: FakeGitHub) -> None:
    # The comment is created but the answer is lost (a 502 from a proxy): no duplicate may follow.
    github.fail_next([502], on="create", after_write=True)
    with client_for(github) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("fail"))
    assert result.action == "updated"
    assert len(github.comments(PR)) == 1
    assert len(github.writes("POST")) == 1


def test_failed_post_without_a_write_is_posted_again(github: FakeGitHub) -> None:
    github.fail_next([503], on="create")
    with client_for(github) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("fail")).action == "created"
    assert len(github.comments(PR)) == 1 and len(github.writes("POST")) == 2
