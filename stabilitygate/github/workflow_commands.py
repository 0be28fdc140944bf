"""GitHub Actions workflow commands and environment files, written as the runner parses them.

Reference: "Workflow commands for GitHub Actions" and actions/toolkit `command.ts` / `file-command.ts`.

The runner reads stdout and stderr on two threads and handles each batch's stderr lines before its
stdout lines, so two lines on different streams have no order. A command that guards other text
(`::add-mask::`, `::stop-commands::` and its resume token) therefore goes to the stream of the text
it guards: only there is it sure to be handled first (or, for the resume token, last).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO

#: GitHub rejects a step summary larger than this (per step), so the gate stays under it.
STEP_SUMMARY_LIMIT = 1024 * 1024
TRUNCATION_NOTE = "\n\n> **Note:** this summary was truncated to stay under GitHub's 1 MiB step-summary limit.\n"
#: A masked value shorter than this would blank out ordinary words all over the log.
MIN_MASK_LENGTH = 4


def escape_data(value: str) -> str:
    """Escape a command's message: the runner splits commands on newlines and decodes %XX."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value: as data, plus `:` and `,` which delimit properties."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_command(name: str, message: str, properties: Mapping[str, object | None] | None = None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (properties or {}).items()
        if value is not None and str(value) != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def _emit(line: str, stream: TextIO | None) -> None:
    out = stream if stream is not None else sys.stdout
    out.write(line + "\n")
    out.flush()


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """An `error`, `warning` or `notice` annotation, attached to file:line when given."""
    if level not in ("error", "warning", "notice"):
        raise ValueError(f"unknown annotation level {level!r}")
    _emit(format_command(level, message, {"file": file, "line": line, "title": title}), stream)


def error(
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    annotation("error", message, file=file, line=line, title=title, stream=stream)


def warning(
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    annotation("warning", message, file=file, line=line, title=title, stream=stream)


def mask_values(value: str) -> list[str]:
    """What to register for one secret: the whole value and each of its lines.

    The runner masks log lines one at a time, so a multi-line secret is only hidden everywhere
    when each of its lines is registered too.
    """
    found: list[str] = []
    for candidate in (value, *value.splitlines()):
        candidate = candidate.strip()
        if len(candidate) >= MIN_MASK_LENGTH and candidate not in found:
            found.append(candidate)
    return found


def add_mask(value: str, *, stream: TextIO | None = None) -> None:
    """Register a secret with the runner, on `stream`, or by default on both stdout and stderr.

    On both, the mask comes before any later line on either stream, whichever the runner reads
    first; registering a value twice does no harm.
    """
    streams: Sequence[TextIO] = (stream,) if stream is not None else (sys.stdout, sys.stderr)
    for part in mask_values(value):
        line = format_command("add-mask", part)
        for out in streams:
            _emit(line, out)


def stop_commands(stream: TextIO) -> str:
    """Stop the runner from reading `::` lines as commands until `resume_commands`; return the token."""
    token = secrets.token_hex(16)  # random, so that no text in between can name it
    _emit(f"::stop-commands::{token}", stream)
    return token


def resume_commands(token: str, stream: TextIO) -> None:
    """Read commands again: on the stream the paused text went to, after all of it."""
    _emit(f"::{token}::", stream)


@contextlib.contextmanager
def commands_paused(stream: TextIO) -> Iterator[str]:
    """No workflow commands from text written to `stream` inside the block (it may be untrusted).

    Both tokens go to `stream` itself: the runner orders lines only within one stream. Write the
    untrusted text to that stream alone; the resume token follows it even when the block raises.
    """
    token = stop_commands(stream)
    try:
        yield token
    finally:
        stream.flush()
        resume_commands(token, stream)


def _delimiter(value: str) -> str:
    while True:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        if delimiter not in value:
            return delimiter


def format_output(name: str, value: str) -> str:
    """One `name<<DELIM ... DELIM` block: safe for any value, multi-line included."""
    if not name or any(c in name for c in "\r\n=<"):
        raise ValueError(f"invalid output name {name!r}")
    delimiter = _delimiter(value)
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def set_outputs(outputs: Mapping[str, str], environ: Mapping[str, str] | None = None) -> bool:
    """Append the outputs to $GITHUB_OUTPUT; False when the variable is not set (not on a runner)."""
    env = os.environ if environ is None else environ
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            handle.write(format_output(name, value))
    return True


def fit_summary(markdown: str, already: int = 0, limit: int = STEP_SUMMARY_LIMIT) -> str:
    """The Markdown cut, on a UTF-8 character boundary, so that `already` bytes plus it fit `limit`."""
    room = limit - already
    data = markdown.encode("utf-8")
    if len(data) <= room:
        return markdown
    note = TRUNCATION_NOTE.encode("utf-8")
    keep = max(room - len(note), 0)
    head = data[:keep].decode("utf-8", errors="ignore")
    # Cut at the last line break, so that no table row or fence is left half-written.
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head + TRUNCATION_NOTE if len(note) <= room else ""


def append_step_summary(markdown: str, environ: Mapping[str, str] | None = None) -> bool:
    """Append to $GITHUB_STEP_SUMMARY within the 1 MiB limit; False when the variable is not set."""
    env = os.environ if environ is None else environ
    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    path = Path(target)
    already = path.stat().st_size if path.exists() else 0
    text = fit_summary(markdown if markdown.endswith("\n") else markdown + "\n", already)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return True
