"""Reading the gate's own JSON files (baselines, reports) strictly: one line naming the file when they are bad.

Files that the gate wrote and a person or a job handed back are input like any other: a damaged,
truncated or foreign file is exit 2 with the file, the place and what was expected, never a traceback.
"""

from __future__ import annotations

import json
import os
import re

from pydantic import JsonValue

from stabilitygate.bounded import read_bytes_bounded
from stabilitygate.errors import BadInput

#: Deeper than this, no file of the gate's is nested (a report is about 10 deep); every reader after
#: the parser recurses, so a deeper document is refused here, naming where it goes deep.
MAX_JSON_DEPTH = 100
#: An integer of more digits than this is no count of the gate's (Python refuses past 4,300).
MAX_INTEGER_DIGITS = 100


class _HugeInteger(Exception):
    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _HugeInteger(digits)
    return int(digits)


def read_json_file(
    path: str | os.PathLike[str], *, what: str, hint: str, limit: int, restore: str | None = None
) -> JsonValue:
    """The JSON document at `path`; FileNotFoundError passes through (a missing file may be fine).

    `what` names the kind of file in messages ("the baseline"), `hint` says how to get a good one,
    `restore` what to do about a truncated one (default: `hint`). A file over `limit` bytes is
    refused before it is read (`stabilitygate.bounded`).
    """
    shown = str(path)
    raw = read_bytes_bounded(path, limit=limit, what=what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{what} is not UTF-8 text: {hint}", path=shown) from exc
    if "\n<<<<<<< " in f"\n{text}" or "\n>>>>>>> " in text:
        raise BadInput(f"{what} has unresolved merge-conflict markers: resolve them or {hint}", path=shown)
    try:
        document: JsonValue = json.loads(text, parse_int=_bounded_int)
    except _HugeInteger as exc:
        line, column = _place(text, text.find(exc.digits))
        raise BadInput(
            f"{what} holds an integer of {len(exc.digits.lstrip('-')):,} digits at column {column} (expected at most "
            f"{MAX_INTEGER_DIGITS}): {hint}",
            path=shown,
            line=line,
        ) from exc
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{what} is not valid JSON ({exc.msg}, column {exc.colno}); it may be truncated: {restore or hint}",
            path=shown,
            line=exc.lineno,
        ) from exc
    except RecursionError as exc:  # deeper than the parser goes: found in the text instead
        line, column = _place(text, _deep_in_text(text))
        raise BadInput(
            f"{what} is nested more than {MAX_JSON_DEPTH} deep (at column {column}): {hint}", path=shown, line=line
        ) from exc
    deep = too_deep(document)
    if deep is not None:
        raise BadInput(f"{what} is nested more than {MAX_JSON_DEPTH} deep (at {deep}): {hint}", path=shown)
    return document


def parse_line(raw: bytes) -> JsonValue:
    """One line of a JSONL file the gate wrote (samples, judgments); ValueError saying what is wrong
    with it: not UTF-8, not JSON, an integer too long or a value nested too deeply."""
    try:
        document: JsonValue = json.loads(raw.decode("utf-8"), parse_int=_bounded_int)
    except UnicodeDecodeError as exc:
        raise ValueError("not UTF-8") from exc
    except _HugeInteger as exc:
        raise ValueError(
            f"an integer of {len(exc.digits.lstrip('-')):,} digits (expected at most {MAX_INTEGER_DIGITS})"
        ) from exc
    except RecursionError as exc:
        raise ValueError("not valid JSON: nested too deeply") from exc
    except ValueError as exc:
        raise ValueError(f"not valid JSON ({exc})") from exc
    deep = too_deep(document)
    if deep is not None:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} deep (at {deep})")
    return document


def too_deep(document: object, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Where `document` first goes deeper than `limit` (its path, shortened), or None: found without
    recursion, so the check itself cannot overflow the stack."""
    todo: list[tuple[object, tuple[str | int, ...]]] = [(document, ())]
    while todo:
        value, path = todo.pop()
        if isinstance(value, dict | list) and len(path) >= limit:  # the (limit + 1)-th container
            return _shown_path(path)
        if isinstance(value, dict):
            todo.extend((child, (*path, key)) for key, child in value.items())
        elif isinstance(value, list):
            todo.extend((child, (*path, i)) for i, child in enumerate(value))
    return None


def _shown_path(path: tuple[str | int, ...], keep: int = 6) -> str:
    parts = "".join(f"[{p}]" if isinstance(p, int) else f".{p!s:.40}" for p in path[:keep]).lstrip(".")
    return f"{parts}... ({len(path) + 1} levels)"


_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deep_in_text(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """The index where the text's brackets (outside strings) first nest deeper than `limit`."""
    depth = 0
    for token in _STRUCTURE.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > limit:
                return token.start()
        elif mark in "]}":
            depth -= 1
    return 0


def _place(text: str, index: int) -> tuple[int, int]:
    """(line, column), both from 1, of `index` in `text`."""
    index = max(index, 0)
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1
