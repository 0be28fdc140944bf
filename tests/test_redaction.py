"""A secret found however it is spelled (issue 25, item 11), on a skeleton of the text mapped back."""

from __future__ import annotations

import base64
import json
import textwrap

import pytest

from stabilitygate.redaction import REDACTED, lattice_spells, pattern_for, redact_with, spelled_forms
from tests.support.app_server import more_key_spellings as spellings

SECRET = "sk-Live_Secret/Key+9876543210zyx"


def hidden(text: str, *secrets: str) -> str:
    return redact_with(pattern_for(frozenset(secrets or (SECRET,))), text)


@pytest.mark.parametrize("form", sorted(spellings(SECRET)))
def test_each_spelling_of_a_secret_is_replaced_and_nothing_else(form: str) -> None:
    spelled = spellings(SECRET)[form]
    assert hidden(f"before {spelled} after") == f"before {REDACTED} after"


@pytest.mark.parametrize("width", [64, 76])
def test_wrapped_base64_loses_the_secret(width: int) -> None:
    blob = base64.b64encode(f"config:\n  token: {SECRET}\n  region: eu-west-1\n".encode()).decode()
    wrapped = "\n".join(textwrap.wrap(blob, width))
    assert "\n" in wrapped
    out = hidden(f"-----BEGIN DATA-----\n{wrapped}\n-----END DATA-----")
    body = out.split("-----BEGIN DATA-----\n", 1)[1].split("\n-----END DATA-----", 1)[0].replace("\n", "")
    head, *rest = body.split(REDACTED)
    assert rest, out
    # The blob's head is aligned: decoded, it stops short of the secret; and the characters that
    # carried the secret's bytes (4 for each 3, less the two mixed with its neighbours) are gone.
    assert SECRET.encode() not in base64.b64decode(head[: len(head) // 4 * 4])
    assert len(body) - len(REDACTED) <= len(blob) - (4 * len(SECRET) // 3 - 4)


def test_the_span_replaced_is_the_texts_own_stretch() -> None:
    # A zero-width split at the edges, line breaks around: the replacement covers exactly the secret.
    spelled = "\u200d".join(SECRET[:5]) + "\u200d" + SECRET[5:].upper()
    text = f"line one\nkey={spelled}\u200b;\nline three\r\n"
    assert hidden(text) == f"line one\nkey={REDACTED}\u200b;\nline three\r\n"
    assert hidden("İstanbul " + SECRET.upper()) == f"İstanbul {REDACTED}"  # İ lowers to two characters


def test_a_secret_split_over_a_line_break_is_still_found() -> None:
    assert hidden(f"{SECRET[:12]}\n{SECRET[12:]}") == REDACTED


def test_text_without_a_secret_is_returned_as_it_was() -> None:
    text = "nothing\u200b here \n but words and a skeleton.\r\n"
    assert hidden(text) == text
    assert redact_with(None, text) == text


def test_forms_are_lower_cased_and_base64_only_for_long_secrets() -> None:
    assert all(form == form.lower() for form in spelled_forms(SECRET))
    short = spelled_forms("abc")
    assert "abc" in short and "cba" in short and base64.b64encode(b"abc").decode().lower() not in short
    assert json.dumps("é-secret-value")[1:-1] in spelled_forms("é-secret-value")


def test_runner_up_tokens_that_spell_a_key_across_entries_are_found() -> None:
    key = SECRET
    tokens = [("The", "A"), (" answer", key[:6]), (" is", key[6:14]), (".", key[14:]), ("", None)]
    lattice = [tuple(p for p in pair if p is not None) for pair in tokens]
    assert lattice_spells(lattice, [key])  # the runner-ups alone spell it
    mixed = [("x", key[:4]), (key[4:10], "y"), ("z", key[10:].upper()), ("w",)]
    assert lattice_spells(mixed, [key])  # a mix of tokens and runner-ups, another case
    assert not lattice_spells([("The",), (" answer", " reply"), (" is 4.",)], [key])
    assert not lattice_spells([], [key])


def test_a_long_lattice_is_walked_without_trying_every_path() -> None:
    # 2^4000 paths; the walk keeps only the ones still spelling a prefix of a form.
    lattice = [("ab", "cd")] * 4000 + [("sk-Live_", "x"), ("Secret/Key+9876543210zyx", "y")]
    assert lattice_spells(lattice, [SECRET])
    assert not lattice_spells(lattice[:-1], [SECRET])


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("clone https://deploy:hunter2-Pw@git.example/r.git now", "clone https://***@git.example/r.git now"),
        ("postgres://app:pw@db:5432/app", "postgres://***@db:5432/app"),
        ("HTTPS://ghp_0123456789abcdef@github.com/o/r", "HTTPS://***@github.com/o/r"),
        ("see https://example.com/a@b and mailto:x@y.z", "see https://example.com/a@b and mailto:x@y.z"),
    ],
    ids=["user-and-password", "short-password", "token-as-user", "no-credentials"],
)
def test_credentials_in_a_url_are_redacted_whatever_their_value(text: str, shown: str) -> None:
    """Issue 37, item 3: a URL's credentials are secrets wherever they appear, known or not."""
    assert redact_with(pattern_for(frozenset()), text) == shown
