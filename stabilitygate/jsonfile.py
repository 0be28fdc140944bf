"""Reading the gate's own JSON files (baselines, reports) strictly: one line naming the file when they are bad.

Files that the gate wrote and a person or a job handed back are input like any other: a damaged,
truncated or foreign file is exit 2 with the file, the place and what was expected, never a traceback.
"""

from __future__ import annotations

import json
import os
from typing import Any

from stabilitygate.bounded import read_bytes_bounded
from stabilitygate.errors import BadInput


def read_json_file(
    path: str | os.PathLike[str], *, what: str, hint: str, limit: int, restore: str | None = None
) -> Any:
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
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{what} is not valid JSON ({exc.msg}, column {exc.colno}); it may be truncated: {restore or hint}",
            path=shown,
            line=exc.lineno,
        ) from exc
    except RecursionError as exc:
        raise BadInput(f"{what} is not valid JSON: nested too deeply", path=shown) from exc
