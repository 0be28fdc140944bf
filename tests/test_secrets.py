"""One collection of a run's secrets, and one redaction that catches them however they are spelled."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest

from stabilitygate.cases import parse_suite, secret_env_names
from stabilitygate.secrets import Secrets, collect_secrets, redact

SECRET = "sk-test/Secret+Key=123?&"


def spellings(secret: str) -> dict[str, str]:
    raw = secret.encode()
    return {
        "raw": secret,
        "quote": urllib.parse.quote(secret, safe=""),
        "quote_default_safe": urllib.parse.quote(secret),
        "quote_plus": urllib.parse.quote_plus(secret),
        "base64": base64.b64encode(raw).decode(),
        "base64_unpadded": base64.b64encode(raw).decode().rstrip("="),
        "urlsafe_base64": base64.urlsafe_b64encode(raw).decode(),
        "urlsafe_unpadded": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "json": json.dumps(secret)[1:-1],
        "json_escaped_slash": json.dumps(secret)[1:-1].replace("/", "\\/"),
    }


@pytest.mark.parametrize("form", sorted(spellings(SECRET)))
def test_every_spelling_of_a_secret_is_redacted(form: str) -> None:
    spelled = spellings(SECRET)[form]
    out = redact(f"before {spelled} after", Secrets.of([SECRET]))
    assert out == "before *** after"


@pytest.mark.parametrize("user", ["", "u", "us", "user", "a-much-longer-user-name"])
def test_basic_credentials_lose_the_secret_whatever_the_user_name(user: str) -> None:
    header = "Basic " + base64.b64encode(f"{user}:{SECRET}".encode()).decode()
    out = redact(f"echoed {header}", [SECRET])
    assert "***" in out
    # What remains cannot give the secret back: at most two characters of it survive either side.
    blob = out.removeprefix("echoed Basic ")
    kept = len(blob.replace("***", ""))
    assert kept <= len(base64.b64encode(f"{user}:".encode()).rstrip(b"=")) + 4


def test_non_ascii_secrets_are_redacted_raw_and_json_escaped() -> None:
    secret = "clé-secrète-Ω-12345"
    text = f"{secret} {json.dumps(secret)} {json.dumps(secret, ensure_ascii=False)}"
    assert redact(text, [secret]) == '*** "***" "***"'


def test_short_values_have_no_base64_forms_and_empty_ones_are_ignored() -> None:
    assert redact("a b c YQ Yg", ["", "b"]) == "a *** c YQ Yg"
    assert redact("abc abcdef", ["abc", "abcdef"]) == "*** ***"  # the longer form wins where both match
    assert redact("nothing here", Secrets()) == "nothing here"


def test_secrets_hold_values_only_and_combine() -> None:
    one, two = Secrets.of(["sk-one-123456", ""]), Secrets.of(["sk-two-123456"])
    assert (one | two).values == frozenset({"sk-one-123456", "sk-two-123456"})
    assert list(one | two) == ["sk-one-123456", "sk-two-123456"] and len(one) == 1


SUITE = """\
version: 1
name: s
provider: {type: openai, model: m, api_key_env: TEAM_KEY, headers: {X-Org: "${ORG_ID}"}}
cases:
  - {id: a, prompt: hi}
  - {id: b, prompt: hi, provider: {type: anthropic, model: c}}
  - id: c
    prompt: hi
    provider: {type: http, url: "http://127.0.0.1:9/", api_key_env: APP_KEY, headers: {A: "${api_key}", B: "${HDR}"}}
  - {id: d, prompt: hi, provider: {type: local}}
"""


def test_collect_secrets_covers_keys_defaults_headers_token_and_credential_like_names() -> None:
    environ = {
        "TEAM_KEY": "team-key-value",
        "ORG_ID": "org-1",
        "OPENAI_API_KEY": "sk-openai-default",
        "ANTHROPIC_API_KEY": "sk-ant-default",
        "APP_KEY": "app-key-value",
        "HDR": "header-value",
        "DEPLOY_TOKEN": "  deploy-token-value  ",
        "SHORT_SECRET": "short",
        "HOME": "/home/someone",
    }
    cases = parse_suite(SUITE, "s.yml").resolved_cases()
    found = collect_secrets(secret_env_names(cases), environ, github_token="ghs_token_value\n")
    assert found.values == {
        "team-key-value",
        "sk-openai-default",
        "sk-ant-default",
        "app-key-value",
        "header-value",
        "ghs_token_value\n",
        "ghs_token_value",
        "  deploy-token-value  ",
        "deploy-token-value",
    }
    assert "TEAM_KEY" not in found.values and "/home/someone" not in found.values
    assert found.too_short == {"ORG_ID"}  # "org-1": too short to redact, warned about by the run
    only_named = collect_secrets(secret_env_names(cases), environ, named_like_secrets=False)
    assert "deploy-token-value" not in only_named.values and "team-key-value" in only_named.values
