"""One collection of a run's secrets, and one redaction that catches them however they are spelled."""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import pytest
import yaml

from stabilitygate.cases import secret_env_names
from stabilitygate.secrets import PUBLIC_INPUTS, Secrets, collect_secrets, is_secret_name, redact
from tests.support.app_server import more_key_spellings as redaction_spellings
from tests.support.suites import parse_suite

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


# --- issue 25: the job's token, credential names, spellings, short values -------------------------

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("form", sorted(redaction_spellings(SECRET)))
def test_spellings_the_first_round_let_through_are_redacted(form: str) -> None:
    out = redact(f"before {redaction_spellings(SECRET)[form]} after", Secrets.of([SECRET]))
    assert out == "before *** after"


@pytest.mark.parametrize(
    "name",
    [
        "INPUT_GITHUB-TOKEN",  # the Action's token: the runner keeps the hyphen
        "INPUT_SOME-UNDECLARED-INPUT",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_CACHE_URL",
        "AWS_SECRET_ACCESS_KEY",
        "SSH_PRIVATE_KEY",
        "NPM_AUTH",
        "GITHUB_PAT",
        "GITHUB_TOKEN",
        "deploy-token",
        "DB_PASSWORD_VALUE",
    ],
)
def test_the_environments_credentials_are_secrets_whatever_the_suite_names(name: str) -> None:
    value = f"value-of-{name}-0123456789"
    found = collect_secrets((), {name: value, "HOME": "/home/runner/work"})
    assert value in found.values and "/home/runner/work" not in found.values
    assert redact(f"echo {value}", found) == "echo ***"


def test_the_actions_settings_are_not_secrets_and_match_action_yml() -> None:
    settings = {name: "regression-or-a-path-longer-than-8" for name in PUBLIC_INPUTS}
    assert collect_secrets((), settings).values == frozenset()
    declared = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    assert {f"INPUT_{name.upper()}" for name in declared} == PUBLIC_INPUTS | {"INPUT_GITHUB-TOKEN"}


def test_a_url_with_a_password_gives_up_the_password_whatever_its_variable() -> None:
    environ = {"DATABASE_URL": "postgres://app:s3cr3t-Passw0rd@db.internal:5432/app", "SITE": "https://x.example/"}
    found = collect_secrets((), environ)
    assert {"s3cr3t-Passw0rd", "app:s3cr3t-Passw0rd", environ["DATABASE_URL"]} <= found.values
    assert "https://x.example/" not in found.values
    assert redact("psql -W s3cr3t-Passw0rd", found) == "psql -W ***"


def test_a_value_too_short_to_redact_is_named_and_left_alone() -> None:
    found = collect_secrets(["TINY_KEY", "OK_KEY"], {"TINY_KEY": "k", "OK_KEY": "ok-key-0123456789"})
    assert found.too_short == {"TINY_KEY"} and "k" not in found.values
    # Never matched inside words: the usage keys and the fingerprint keep every k.
    text = '{"fingerprint":"fp_fake","usage":{"prompt_tokens":10}} ok-key-0123456789'
    assert redact(text, found) == '{"fingerprint":"fp_fake","usage":{"prompt_tokens":10}} ***'


def test_a_key_is_redacted_before_the_text_is_cut() -> None:
    secrets = Secrets.of([SECRET])
    text = "x" * 290 + SECRET + " and more"
    assert secrets.cut(text, 300) == "x" * 290 + "*** and mo..."
    assert SECRET[:-1] not in secrets.cut(text, 300 + len(SECRET) - 1)


def test_the_shells_working_directories_are_not_secrets_but_a_password_named_pwd_is() -> None:
    env = {"PWD": "/home/runner/work/repo/repo", "OLDPWD": "/home/runner", "DB_PWD": "hunter2-but-longer"}
    assert not is_secret_name("PWD") and not is_secret_name("OLDPWD") and is_secret_name("DB_PWD")
    assert collect_secrets((), env).values == {"hunter2-but-longer"}


@pytest.mark.parametrize(
    "name",
    ["PGPASSWORD", "GPG_PASSPHRASE", "SENTRY_DSN", "SLACK_WEBHOOK_URL", "MYSQL_ROOT_PASS", "DSN", "TEAMS_WEBHOOK"],
)
def test_the_common_names_of_passwords_dsns_and_webhooks_are_secrets(name: str) -> None:
    """Issue 37, item 3: names that hold a credential without saying KEY, TOKEN or SECRET."""
    value = f"value-of-{name}-0123456789"
    found = collect_secrets((), {name: value})
    assert value in found.values
    assert redact(f"echo {value}", found) == "echo ***"


@pytest.mark.parametrize("name", ["PASSENGER_COUNT", "BYPASS_CACHE", "COMPASS_HOME", "PASSTHROUGH"])
def test_names_that_only_contain_pass_are_not_secrets(name: str) -> None:
    assert collect_secrets((), {name: "/a/path/of/some/length"}).values == frozenset()


def test_an_error_preview_is_redacted_before_it_is_folded_onto_one_line_and_cut() -> None:
    """Issue 37, item 3: a key echoed across a line break was folded to `sk-a sk-b` first, then missed."""
    secrets = Secrets.of([SECRET])
    body = "error:\n  your key " + SECRET[:9] + "\r\n" + SECRET[9:] + " is\n\nrefused " + "x" * 400
    shown = secrets.preview(body, 300)
    assert "\n" not in shown and shown.startswith("error: your key *** is refused x")
    assert len(shown) == 300 + len("...") and SECRET[:6] not in shown and SECRET[-6:] not in shown
