"""Every secret a run can touch, collected in one place, and the one function that redacts them.

The sampler, the providers, the reports and the Action all redact with `redact`: a secret is
replaced in every spelling it is likely to take on its way into a message (raw, URL-encoded,
JSON-escaped, base64 alone or inside Basic credentials).
"""

from __future__ import annotations

import base64
import functools
import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

REDACTED = "***"
# Variables whose values look like credentials, secret whatever the suite says (the Action masks them).
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_HEURISTIC_SECRET = 8
# The base64 of a value this short is a few letters that occur in any text.
MIN_BASE64_SECRET = 8


@dataclass(frozen=True)
class Secrets:
    """The secret values of a run (never their variable names: those may be shown)."""

    values: frozenset[str] = frozenset()

    @classmethod
    def of(cls, values: Iterable[str]) -> Secrets:
        return cls(frozenset(v for v in values if v))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.values))

    def __len__(self) -> int:
        return len(self.values)

    def __or__(self, other: Secrets) -> Secrets:
        return Secrets(self.values | other.values)

    def redact(self, text: str) -> str:
        """`text` with every spelling of every secret replaced by `***`."""
        pattern = _pattern_for(self.values)
        return text if pattern is None else pattern.sub(REDACTED, text)


def redact(text: str, secrets: Secrets | Iterable[str]) -> str:
    """`text` with every spelling of every secret replaced by `***`."""
    held = secrets if isinstance(secrets, Secrets) else Secrets.of(secrets)
    return held.redact(text)


@functools.lru_cache(maxsize=64)
def _pattern_for(values: frozenset[str]) -> re.Pattern[str] | None:
    """One regex of every form of every secret (cached: a run redacts with the same few sets)."""
    forms = {form for secret in values for form in spelled_forms(secret)}
    if not forms:
        return None
    # Longest first, so that a form containing another is replaced whole.
    return re.compile("|".join(re.escape(form) for form in sorted(forms, key=lambda f: (-len(f), f))))


def spelled_forms(secret: str) -> set[str]:
    """The spellings of `secret` that redaction replaces."""
    if not secret:
        return set()
    forms = {secret, *_url_forms(secret), *_json_forms(secret)}
    if len(secret) >= MIN_BASE64_SECRET:
        forms.update(_base64_forms(secret.encode()))
    return {form for form in forms if form}


def _url_forms(secret: str) -> set[str]:
    return {urllib.parse.quote(secret, safe=""), urllib.parse.quote(secret), urllib.parse.quote_plus(secret)}


def _json_forms(secret: str) -> set[str]:
    escaped = {json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    return escaped | {form.replace("/", "\\/") for form in escaped}  # some encoders escape '/'


def _base64_forms(raw: bytes) -> set[str]:
    """The secret's base64 forms, and the part of it that any base64 containing it must contain.

    Inside a longer blob (`user:secret` in Basic credentials) the secret starts at one of three
    byte offsets modulo 3; for each, the characters that depend on the secret's bytes alone are
    the same whatever surrounds it.
    """
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        forms.update({whole, whole.rstrip("=")})
        for offset in range(3):
            encoded = encode(b"\0" * offset + raw).decode().rstrip("=")
            first = -(-8 * offset // 6)  # the first character with no bit of the padding before
            last = 8 * (offset + len(raw)) // 6  # characters past this mix in what follows
            forms.add(encoded[first:last])
    return forms


def collect_secrets(
    names: Iterable[str],
    environ: Mapping[str, str],
    *,
    github_token: str | None = None,
    named_like_secrets: bool = True,
) -> Secrets:
    """Every secret value a run can touch, given the names of the variables its providers read.

    `names` are the providers' key variables (defaults included, e.g. ANTHROPIC_API_KEY) and the
    variables their headers use as ${VAR} (`stabilitygate.cases.secret_env_names`); then the GitHub
    token, and (unless `named_like_secrets` is False) every variable named like a credential
    (`*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`) whose value has at least 8 characters.
    """
    values = [environ[name] for name in set(names) if environ.get(name)]
    if github_token and github_token.strip():
        values += [github_token, github_token.strip()]
    if named_like_secrets:
        values += credential_like_values(environ)
    return Secrets.of(values)


def credential_like_values(environ: Mapping[str, str]) -> list[str]:
    """Values of variables named like credentials, long enough not to be a word of any text."""
    values: list[str] = []
    for name, value in environ.items():
        if name.upper().endswith(SECRET_SUFFIXES) and len(value.strip()) >= MIN_HEURISTIC_SECRET:
            values += [value, value.strip()]
    return values
