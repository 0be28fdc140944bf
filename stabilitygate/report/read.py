"""Reading a report.json back (merge, comment-from, the library): bounded, parsed, validated, typed."""

from __future__ import annotations

import os

from stabilitygate.bounded import MAX_REPORT_BYTES
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import read_json_file
from stabilitygate.plain import plain
from stabilitygate.report.model import Report

_HINT = "use the report.json a `stabilitygate run` (or the Action) wrote"


def read_report(path: str | os.PathLike[str]) -> Report:
    """The report at `path`, validated; BadInput (exit 2, one line) for a missing, oversized or bad file."""
    try:
        data = read_json_file(path, what="the report", hint=_HINT, limit=MAX_REPORT_BYTES)
    except FileNotFoundError as exc:
        raise BadInput("no such file", path=str(path)) from exc
    return Report.from_dict(plain(data), source=str(path))
