"""Which account the token acts as: the login the gate's own comments are written under.

GraphQL `viewer` names every kind of token (for `GITHUB_TOKEN`, `github-actions[bot]`); REST
`GET /user` refuses installation tokens, so it is only the fallback.
"""

from __future__ import annotations

from pydantic import TypeAdapter

from stabilitygate.github.api_client import Answer, GitHubClient, decode_json, validate_answer
from stabilitygate.github.api_errors import CommentError, RateLimited

VIEWER_QUERY = "query StabilitygateViewer { viewer { login } }"


class Account(Answer):
    login: str


class _Viewer(Answer):
    viewer: Account


_ACCOUNT = TypeAdapter(Account)
_VIEWER = TypeAdapter(_Viewer)


def token_login(client: GitHubClient) -> str:
    """The login of the account the token acts as, as REST names comment authors (`github-actions[bot]`)."""
    try:
        return validate_answer(_VIEWER, client.graphql(VIEWER_QUERY), "GraphQL viewer").viewer.login
    except RateLimited:
        raise
    except CommentError as graphql_failure:
        status = graphql_failure.status
        if status is None or status >= 500 or status == 401:  # GET /user would fare no better
            raise
        try:
            response = client.request("GET", f"{client.api_url}/user")
            return validate_answer(_ACCOUNT, decode_json(response, "GET /user"), "GET /user").login
        except CommentError as exc:
            # GET /user refuses installation tokens: GraphQL's failure is the one that names the cause.
            raise CommentError(
                f"could not learn which account the token is ({graphql_failure}; {exc})",
                status=graphql_failure.status,
                hint=graphql_failure.hint,
            ) from exc
