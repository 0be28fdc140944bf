"""The fields a provider's reply brings besides its text, checked where they enter (docs/design.md §15).

A server chooses every one of them. A usage count of 10**150 or -5 made a report that `merge` refused
and a baseline that every later run refused; 12 finish reasons of 1.3 M characters made an 89 MiB
report. Usage counts are numbers the run adds up, so one out of bounds makes the reply a failed sample
with its cause (a retry asks the same server); a label or a name is only shown, so past its bound it
is cut, after it is redacted. The samples file's reader holds the same bounds (`samples.Sample`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stabilitygate.providers.interface import ProviderError
from stabilitygate.samples import MAX_NAME_CHARS, MAX_TOKEN_COUNT

_MAX_USAGE_KEYS = 16


def checked_usage(usage: Mapping[str, object] | None) -> Mapping[str, int] | None:
    """`usage` when every count is a whole number of tokens within bounds; else ProviderError."""
    if usage is None:
        return None
    if len(usage) > _MAX_USAGE_KEYS:
        raise _bad_usage(f"has {len(usage)} counts (expected at most {_MAX_USAGE_KEYS})")
    for key, count in usage.items():
        if len(key) > MAX_NAME_CHARS:
            raise _bad_usage(f"names a count of {len(key):,} characters (expected at most {MAX_NAME_CHARS})")
        if isinstance(count, bool) or not isinstance(count, int):
            raise _bad_usage(f"{key} is a {type(count).__name__}, not a whole number of tokens")
        if not 0 <= count <= MAX_TOKEN_COUNT:
            shown = "negative" if count < 0 else f"more than {MAX_TOKEN_COUNT:,}"
            raise _bad_usage(f"{key} is {shown}: expected 0 to {MAX_TOKEN_COUNT:,} tokens")
    return {key: count for key, count in usage.items() if isinstance(count, int)}


def bounded(text: str | None, limit: int, hide: Callable[[str], str]) -> str | None:
    """`text` redacted, then cut to `limit` characters (never cut first: a key would straddle the cut)."""
    if text is None:
        return None
    shown = hide(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _bad_usage(why: str) -> ProviderError:
    return ProviderError(f"the reply's usage {why}", retryable=False, kind="bad_reply")
