from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from stabilitygate.github.comments import (
    BAD_CREDENTIALS_HINT,
    FORK_HINT,
    MAX_COMMENT_CHARS,
    NOT_FOUND_HINT,
    PERMISSION_HINT,
    RATE_LIMIT_HINT,
    CommentError,
    CommentForbidden,
    CommentResult,
    GitHubClient,
    PullRequest,
    RateLimited,
    comment_warning,
    fit_comment,
    graphql_url_for,
    own_marked_comments,
    upsert_sticky_comment,
)
from tests.support.github_server import ACTIONS_BOT, FakeGitHub

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


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def clock() -> FakeTime:
    return FakeTime()


def client_for(github: FakeGitHub, clock: FakeTime | None = None, token: str = TOKEN) -> GitHubClient:
    time = clock or FakeTime()
    return GitHubClient(token, api_url=github.api_url, sleep=time.sleep, clock=time.clock)


def body(text: str) -> str:
    return f"{MARKER}\n## llm-stability-gate: {text}\n"


def marked(github: FakeGitHub) -> list[dict[str, object]]:
    return [c for c in github.comments(PR) if str(c["body"]).startswith(MARKER)]


# ---- created once, updated after; only the token's own comments


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


def test_forbidden_update_leaves_the_previous_comment(github: FakeGitHub) -> None:
    github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    github.forbid_writes = True
    with client_for(github) as client, pytest.raises(CommentForbidden):
        upsert_sticky_comment(client, REPO, PR, body("new"))
    assert github.comments(PR)[0]["body"] == body("old")


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


# ---- rate limits, waited out through the injected clock


def test_secondary_rate_limit_waits_retry_after_then_posts(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="create", retry_after=30)
    with client_for(github, clock) as client:
        result = upsert_sticky_comment(client, REPO, PR, body("x"))
    assert result.action == "created" and clock.slept == [30.0]
    assert len(github.writes("POST")) == 2 and len(github.comments(PR)) == 1


def test_secondary_rate_limit_without_retry_after_backs_off_from_a_minute(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="list")
    github.secondary_rate_limit_next(on="list")
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("x")).action == "created"
    assert clock.slept == [60.0, 120.0]


def test_secondary_rate_limit_backoff_is_capped(github: FakeGitHub, clock: FakeTime) -> None:
    github.secondary_rate_limit_next(on="list")
    github.secondary_rate_limit_next(on="list")
    with GitHubClient(TOKEN, api_url=github.api_url, sleep=clock.sleep, clock=clock.clock, max_wait_s=90) as client:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == [60.0, 90.0]


def test_a_rate_limit_that_lasts_gives_up_with_its_own_hint(github: FakeGitHub, clock: FakeTime) -> None:
    for _ in range(3):
        github.secondary_rate_limit_next(on="create")
    with client_for(github, clock) as client, pytest.raises(RateLimited) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == [60.0, 120.0]  # two retries, then it gives up
    assert caught.value.status == 403 and caught.value.hint == RATE_LIMIT_HINT
    warning = comment_warning(PR, caught.value)
    assert "secondary rate limit" in warning and "fork" not in warning
    assert github.comments(PR) == []


def test_primary_rate_limit_waits_until_the_reset(github: FakeGitHub, clock: FakeTime) -> None:
    github.primary_rate_limit_next(on="list", reset_at=int(NOW) + 90)
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("x")).action == "created"
    assert clock.slept == [91.0]  # until the reset, and a second for clock skew


def test_primary_rate_limit_far_off_is_not_waited_for(github: FakeGitHub, clock: FakeTime) -> None:
    github.primary_rate_limit_next(on="viewer", reset_at=int(NOW) + 3600, status=429)
    with client_for(github, clock) as client, pytest.raises(RateLimited) as caught:
        upsert_sticky_comment(client, REPO, PR, body("x"))
    assert clock.slept == []
    assert caught.value.status == 429 and "wait 3601 s" in str(caught.value)
    assert github.comments(PR) == []


def test_429_without_headers_is_a_secondary_limit(github: FakeGitHub, clock: FakeTime) -> None:
    github.fail_next([429], on="edit")
    github.add_comments(PR, [body("old")], login=ACTIONS_BOT)
    with client_for(github, clock) as client:
        assert upsert_sticky_comment(client, REPO, PR, body("new")).action == "updated"
    assert clock.slept == [60.0] and github.comments(PR)[0]["body"] == body("new")


# ---- server errors and the network


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


def test_warning_without_a_hint_is_one_plain_line() -> None:
    assert comment_warning(3, CommentError("GET /x answered HTTP 500")) == (
        "could not comment on pull request #3: GET /x answered HTTP 500"
    )
