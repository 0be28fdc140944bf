"""Finding a secret however it is spelled, and replacing it (docs/design.md §12, "Secrets").

A completion, an error body or a log line may carry a key in many spellings: raw or reversed,
upper- or lower-cased, URL- or percent-encoded, JSON- or `\\u`-escaped, as HTML entities, as hex,
as base64 alone, inside Basic credentials or wrapped over several lines, and with invisible
characters between its letters. Every spelling is matched on a *skeleton* of the text: lower-cased,
with zero-width characters and line breaks taken out. The spans found there are mapped back onto
the text, so what is replaced is exactly the stretch of the text that spelled the secret.
"""

from __future__ import annotations

import base64
import bisect
import functools
import html
import json
import re
import urllib.parse
from collections.abc import Iterable, Sequence

from stabilitygate.trie_pattern import trie_pattern

REDACTED = "***"
# The base64 of a value this short is a few letters that occur in any text.
MIN_BASE64_SECRET = 8
#: Taken out of the skeleton: zero-width characters (invisible between a key's letters) and line
#: breaks (base64 and hex wrapped at 64 or 76 columns).
_FILLER = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad\r\n]+")
#: A URL's credentials (`https://user:pass@host`, `https://TOKEN@host`): secrets whatever their value,
#: known to the run or not (docs/design.md §12). The scheme is bounded so that a long run of letters and
#: dots is not scanned again from each of its characters; the credentials end at the first `/`, so
#: every `://` starts one scan of its own stretch.
_URL_CREDENTIALS = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}://)[^\s/?#@\[\]]+@")


def spelled_forms(secret: str) -> set[str]:
    """The spellings of `secret` that redaction replaces, lower-cased (they are matched that way)."""
    if not secret:
        return set()
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, secret[::-1], *_url_forms(secret, raw), *_escaped_forms(secret), raw.hex()}
    if len(secret) >= MIN_BASE64_SECRET:
        forms.update(_base64_forms(raw))
    return {_lowered(_FILLER.sub("", form)) for form in forms if form}


def _url_forms(secret: str, raw: bytes) -> set[str]:
    every_byte = "".join(f"%{byte:02x}" for byte in raw)
    return {
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret),
        every_byte,
    }


def _escaped_forms(secret: str) -> set[str]:
    """JSON (and '/'-escaping encoders), every character `\\u`- or `\\x`-escaped, HTML entities."""
    escaped = {json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]}
    escaped |= {form.replace("/", "\\/") for form in escaped}
    points = [ord(ch) for ch in secret]
    escaped.add("".join(f"\\u{p:04x}" if p <= 0xFFFF else f"\\U{p:08x}" for p in points))
    if all(p < 0x100 for p in points):
        escaped.add("".join(f"\\x{p:02x}" for p in points))
    escaped.add("".join(f"&#{p};" for p in points))
    escaped.add("".join(f"&#x{p:x};" for p in points))
    escaped |= {html.escape(secret), html.escape(secret, quote=False)}  # &amp; &lt; &gt; &quot; &#x27;
    return escaped


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


def _lowered(text: str) -> str:
    """`text` lower-cased one character for one character (a few characters lower to two)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


@functools.lru_cache(maxsize=64)
def pattern_for(values: frozenset[str]) -> re.Pattern[str] | None:
    """One regex of every form of every secret (cached: a run redacts with the same few sets)."""
    forms = {form for secret in values for form in spelled_forms(secret)}
    if not forms:
        return None
    return re.compile(trie_pattern(sorted(forms)))


def redact_with(pattern: re.Pattern[str] | None, text: str) -> str:
    """`text` with every stretch that spells a secret replaced by `***`, and every URL's credentials."""
    return _without_url_credentials(_without_values(pattern, text))


def _without_url_credentials(text: str) -> str:
    if "://" not in text or "@" not in text:
        return text
    return _URL_CREDENTIALS.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)


def _without_values(pattern: re.Pattern[str] | None, text: str) -> str:
    if pattern is None or not text:
        return text
    skeleton = _Skeleton(text)
    spans = [skeleton.original(m.start(), m.end()) for m in pattern.finditer(skeleton.text)]
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out += [text[at:start], REDACTED]
        at = end
    out.append(text[at:])
    return "".join(out)


class _Skeleton:
    """The text lower-cased and without fillers, and the way back from its positions to the text's."""

    def __init__(self, text: str) -> None:
        lowered = _lowered(text)
        removed = [(m.start(), m.end()) for m in _FILLER.finditer(lowered)]
        self.text = _FILLER.sub("", lowered) if removed else lowered
        # For each run of fillers: where it sits in the skeleton, and the fillers up to its end.
        self._at: list[int] = []
        self._before: list[int] = []
        total = 0
        for start, end in removed:
            self._at.append(start - total)
            total += end - start
            self._before.append(total)

    def _to_text(self, index: int) -> int:
        """The text's position of the skeleton's character at `index`."""
        runs = bisect.bisect_right(self._at, index)
        return index + (self._before[runs - 1] if runs else 0)

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The text's span from the first to the last character of the skeleton's [start, end)."""
        return self._to_text(start), self._to_text(end - 1) + 1


_Trie = dict[str, "_Trie"]
_END = ""  # the key that marks a node where a form ends (no character is the empty string)


@functools.lru_cache(maxsize=64)
def _trie_for(values: frozenset[str]) -> _Trie:
    root: _Trie = {}
    for form in {form for value in values for form in spelled_forms(value)}:
        node = root
        for ch in form:
            node = node.setdefault(ch, {})
        node[_END] = {}
    return root


def lattice_spells(pieces: Sequence[Sequence[str]], values: Iterable[str]) -> bool:
    """Whether some path through `pieces` (one of each position's alternatives, in order) spells a
    form of a secret: logprob tokens and their runner-ups may spell a key together.

    The paths are walked together through a trie of the forms, so the work grows with the pieces'
    length and the paths still alive, not with the number of paths (2 to the number of positions).
    """
    root = _trie_for(frozenset(values))
    alive: list[_Trie] = []
    for choices in pieces:
        following: dict[int, _Trie] = {}
        for piece in choices:
            piece = _lowered(_FILLER.sub("", piece))
            # The paths alive go on with this piece, and a path may start at any of its characters.
            walks = [(node, piece) for node in alive] + [(root, piece[cut:]) for cut in range(len(piece))]
            for node, rest in walks:
                ends, reached = _walk(node, rest)
                if ends:
                    return True
                if reached is not None:
                    following[id(reached)] = reached
        alive = [node for node in following.values() if node is not root]
    return False


def _walk(node: _Trie, text: str) -> tuple[bool, _Trie | None]:
    """(a form ended on the way, the node reached: None when no form goes on with `text`)."""
    for ch in text:
        if _END in node:
            return True, None
        found = node.get(ch)
        if found is None:
            return False, None
        node = found
    return _END in node, node
