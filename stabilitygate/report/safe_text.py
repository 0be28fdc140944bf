"""Making untrusted model text safe to show in GitHub-flavoured Markdown.

A completion is whatever the model (or a prompt injection inside it) chose to write. In a PR
comment it must stay text: no HTML element it opens, no fence it closes early, no table it breaks,
no @mention or issue reference that pings people.
"""

from __future__ import annotations

import html
import re

ZWJ = "\u200d"  # zero-width joiner: invisible, but "@\u200dorg" is no longer a mention
NEWLINE_MARK = " ⏎ "

# C0/C1 controls except tab and newline, lone surrogates, and the bidirectional overrides that
# make text display in another order than it reads ("Trojan Source").
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"([@＠])(?=[A-Za-z0-9_])")
_REFERENCE = re.compile(r"#(?=\d)")
_GH_REFERENCE = re.compile(r"(?i)\b(gh-)(?=\d)")  # GitHub links GH-123 as it links #123
_FENCE_RUNS = {"`": re.compile(r"`+"), "~": re.compile(r"~+")}
#: cmark-gfm (GitHub's renderer) keeps at most 255 of a fence's characters, so a line of 255 closes
#: any longer fence: a text holding such a run of both characters goes in an HTML-escaped <pre>.
MAX_FENCE = 255
_WWW = re.compile(r"(?i)\bwww\.")
# ASCII punctuation that can start Markdown syntax inline: emphasis, links (and so images and
# footnotes), code, tables, strikethrough, math, headings; `&<>` become entities. The rest is inert
# mid-line: `(` `)` `!` mean something only next to an escaped `[`.
_ACTIVE = set("\\`*_[]|~$#")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LINE_START = re.compile(r"^(\s*)([-+=]|\d+[.)])")


def clean(text: str) -> str:
    """One newline convention, no control characters, no bidi overrides, no lone surrogates."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Controls go; the rest becomes U+FFFD so that the reader sees something was there.
    return _UNSAFE.sub(lambda m: "" if m.group() <= "\x9f" else "\ufffd", text)


def truncate(text: str, limit: int) -> tuple[str, int]:
    """`text` cut to at most `limit` characters, and how many characters were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def no_pings(text: str) -> str:
    """Break @mentions and #123 and GH-123 issue references with an invisible joiner."""
    text = _MENTION.sub(r"\1" + ZWJ, text)
    return _GH_REFERENCE.sub(r"\1" + ZWJ, _REFERENCE.sub("#" + ZWJ, text))


def inline(text: str, limit: int = 500, *, line_start: bool = True) -> str:
    """Untrusted text as one line of inert Markdown: for list items, paragraphs and table cells.

    `line_start` also escapes what would open a list or heading at the start of a line.
    """
    text, cut = truncate(clean(str(text)), limit)
    text = text.replace("\n", NEWLINE_MARK).replace("\t", " ")
    out = []
    for ch in text:
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _ACTIVE:
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    if line_start:
        escaped = _LINE_START.sub(lambda m: m.group(1) + _escape_all(m.group(2)), escaped)
    return no_pings(no_autolinks(escaped)) + ("…" if cut else "")


def no_autolinks(text: str) -> str:
    """Keep URLs in model text from becoming links (phishing); rendered, the text reads the same."""
    return _WWW.sub(lambda m: m.group()[:-1] + "\\.", text.replace("://", "\\:\\/\\/"))


def cell(text: str, limit: int = 80) -> str:
    """A table cell: one line (a `|` cannot end the cell), short, inert."""
    return inline(text, limit, line_start=False)  # inside a row nothing starts a block


def html_text(text: str, limit: int = 200) -> str:
    """Text inside an HTML element we write (e.g. <summary>), where Markdown is not parsed."""
    text, cut = truncate(clean(str(text)), limit)
    return no_pings(html.escape(" ".join(text.split()), quote=True)) + ("…" if cut else "")


def fence(text: str, info: str = "text") -> str:
    """A code block that no line of `text` can close.

    A fence of backticks one longer than any backtick run in the text, else of tildes (a fence
    never holds more than `MAX_FENCE` characters), else an HTML-escaped `<pre>` block, which only
    a `</pre>` would end and no escaped text can write.
    """
    text = clean(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    for mark, runs in _FENCE_RUNS.items():
        length = max(3, max((len(run) for run in runs.findall(text)), default=0) + 1)
        if length <= MAX_FENCE:
            return f"{mark * length}{info}\n{body}{mark * length}"
    return f"<pre>\n{no_pings(html.escape(body, quote=False))}</pre>"


def bar(count: int, total: int, width: int = 10) -> str:
    """A distribution bar read at a glance: '████████░░ 8/10'."""
    if total <= 0:
        return "░" * width + f" {count}/{total}"
    # Clamped: a damaged report may count more than its total.
    filled = min(max(round(width * count / total), 0), width)
    if count > 0:
        filled = max(filled, 1)  # a rare completion still shows
    if count < total:
        filled = min(filled, width - 1)  # and a near-total one does not look total
    return "█" * filled + "░" * (width - filled) + f" {count}/{total}"


#: A marker names the suite; a report read back is bounded already, this bounds any caller.
MAX_MARKER_NAME = 100


def marker_name(name: str) -> str:
    """The suite name as it may appear inside an HTML comment marker: no `--`, no `>`, not long."""
    safe = re.sub(r"[^A-Za-z0-9_.]+", "-", name[: MAX_MARKER_NAME * 2]).strip("-")[:MAX_MARKER_NAME].strip("-")
    return safe or "suite"


def _escape_all(text: str) -> str:
    return "".join("\\" + ch if not ch.isalnum() else ch for ch in text)
