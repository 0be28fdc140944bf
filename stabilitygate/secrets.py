"""Every secret a run can touch, collected in one place, and the one function that redacts them.

The sampler, the providers, the reports and the Action all redact with `redact`: a secret is
replaced in every spelling it is likely to take on its way into a message (`stabilitygate.redaction`).
Which variables hold secrets is decided here (docs/design.md §12): the ones the suite names, the
GitHub token, and every variable of the environment that looks like a credential, the runner's
`INPUT_*` and `ACTIONS_*` values included.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from stabilitygate.redaction import REDACTED, lattice_spells, pattern_for, redact_with

__all__ = ["MIN_SECRET_CHARS", "REDACTED", "Secrets", "collect_secrets", "environment_secrets", "redact"]

#: A value shorter than this occurs inside ordinary words ("k", "1234"): replacing it would alter the
#: completions before they are measured, so it is not redacted, and a variable the suite names that
#: holds one is warned about (docs/design.md §12, "Short values").
MIN_SECRET_CHARS = 8
#: A word of a variable's name (split at `_`, `-` and `.`) that marks it as a credential when it ends
#: the name (AWS_SECRET_ACCESS_KEY, NPM_AUTH, GITHUB_PAT, INPUT_GITHUB-TOKEN) ...
_LAST_WORDS = frozenset(
    {"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD", "PAT", "AUTH", "CREDENTIAL"}
) | {"CREDENTIALS"}
#: ... or stands anywhere in it (SSH_PRIVATE_KEY_B64, DB_PASSWORD_VALUE).
_ANY_WORDS = frozenset({"SECRET", "PASSWORD", "PASSWD", "PRIVATE", "TOKEN", "CREDENTIALS"})
#: ... or is part of it, even inside a word: PGPASSWORD, GPG_PASSPHRASE, SENTRY_DSN, SLACK_WEBHOOK_URL.
_ANY_PARTS = ("PASSWORD", "PASSPHRASE", "DSN", "WEBHOOK")
_NAME_WORDS = re.compile(r"[_.-]+")
#: Named like a password (`PWD`) but the shell's working directories: masking one hides a path (the
#: workspace) in every log line, and no secret is ever there.
_NOT_SECRETS = frozenset({"PWD", "OLDPWD"})
#: The Action's inputs whose values are its own settings (paths, numbers, booleans, choices; see
#: action.yml): shown in the report anyway, and redacting "true" or a path would alter completions.
#: Every other `INPUT_*` value, the token first, is a secret.
PUBLIC_INPUTS = frozenset(
    "INPUT_" + name.upper()
    for name in (
        "suite",
        "baseline",
        "samples",
        "update-baseline",
        "comment",
        "fail-on",
        "working-directory",
        "shard",
        "merge",
        "changed-only",
        "comment-from",
        "pr-number",
        "accept-baseline-suite",
        "variants",
    )
)


@dataclass(frozen=True)
class Secrets:
    """The secret values of a run (never their variable names: those may be shown), and the names of
    the variables the suite named whose values are too short to redact."""

    values: frozenset[str] = frozenset()
    too_short: frozenset[str] = frozenset()

    @classmethod
    def of(cls, values: Iterable[str]) -> Secrets:
        return cls(frozenset(v for v in values if v))

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.values))

    def __len__(self) -> int:
        return len(self.values)

    def __or__(self, other: Secrets) -> Secrets:
        return Secrets(self.values | other.values, self.too_short | other.too_short)

    def redact(self, text: str) -> str:
        """`text` with every spelling of every secret replaced by `***`."""
        return redact_with(pattern_for(self.values), text)

    def cut(self, text: str, limit: int, mark: str = "...") -> str:
        """`text` redacted, then cut to `limit` characters: never cut first, or a key that straddles
        the cut would keep all but its last characters."""
        shown = self.redact(text)
        return shown if len(shown) <= limit else shown[:limit] + mark

    def preview(self, text: str, limit: int, mark: str = "...") -> str:
        """`text` redacted, then folded onto one line, then cut: folded first, a key echoed across a
        line break would become two pieces that no spelling matches (docs/design.md §12)."""
        folded = " ".join(self.redact(text).split())
        return folded if len(folded) <= limit else folded[:limit] + mark

    def spelled_by(self, pieces: Sequence[Sequence[str]]) -> bool:
        """Whether some path through `pieces` (one alternative a position) spells a secret."""
        return bool(self.values) and lattice_spells(pieces, self.values)


def redact(text: str, secrets: Secrets | Iterable[str]) -> str:
    """`text` with every spelling of every secret replaced by `***`."""
    held = secrets if isinstance(secrets, Secrets) else Secrets.of(secrets)
    return held.redact(text)


def collect_secrets(
    names: Iterable[str],
    environ: Mapping[str, str],
    *,
    github_token: str | None = None,
    named_like_secrets: bool = True,
) -> Secrets:
    """Every secret value a run can touch, given the names of the variables its providers read.

    `names` are the providers' key variables (defaults included, e.g. ANTHROPIC_API_KEY) and the
    variables their headers use as ${VAR} (`stabilitygate.cases.secret_env_names`): one whose value
    is shorter than `MIN_SECRET_CHARS` is left out and named in `too_short`. Then the GitHub token,
    and (unless `named_like_secrets` is False) `environment_secrets(environ)`.
    """
    values: list[str] = []
    short: set[str] = set()
    for name in sorted(set(names)):
        value = environ.get(name)
        if not value:
            continue
        if len(value.strip()) < MIN_SECRET_CHARS:
            short.add(name)
            continue
        values += [value, value.strip()]
    if github_token and len(github_token.strip()) >= MIN_SECRET_CHARS:
        values += [github_token, github_token.strip()]
    if named_like_secrets:
        values += environment_secrets(environ)
    return Secrets(frozenset(v for v in values if v), frozenset(short))


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """The values of the environment that are secret whatever the suite says, long enough not to be
    a word of any text: variables named like credentials, every `INPUT_*` value but the Action's
    settings (`PUBLIC_INPUTS`), every `ACTIONS_*` value, and the password of any URL with one."""
    values: list[str] = []
    for name, value in environ.items():
        if is_secret_name(name) and len(value.strip()) >= MIN_SECRET_CHARS:
            values += [value, value.strip()]
        values += _url_credentials(value)
    return values


def is_secret_name(name: str) -> bool:
    """Whether the variable `name` holds a secret by its name alone (the runner's or a credential's)."""
    upper = name.upper()
    if upper in _NOT_SECRETS:
        return False
    if upper.startswith("ACTIONS_"):
        return True
    if upper.startswith("INPUT_"):
        return upper not in PUBLIC_INPUTS
    if any(part in upper for part in _ANY_PARTS):
        return True
    words = [word for word in _NAME_WORDS.split(upper) if word]
    return bool(words) and (words[-1] in _LAST_WORDS or not _ANY_WORDS.isdisjoint(words))


def _url_credentials(value: str) -> list[str]:
    """`DATABASE_URL=postgres://user:pass@host/db`: the URL, the password and `user:pass`."""
    if "://" not in value or "@" not in value:
        return []
    try:
        parts = urllib.parse.urlsplit(value.strip())
        password = parts.password
    except ValueError:
        return []
    if not password:
        return []
    found = [value.strip(), f"{parts.username or ''}:{password}", password, urllib.parse.unquote(password)]
    return [v for v in found if len(v) >= MIN_SECRET_CHARS]
