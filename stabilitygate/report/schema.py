"""The report JSON's shape, checked when a report is read back (merge, comment-from, the library).

Only what the gate relies on when it reads a report is required; the numbers inside `metrics`
are left free, as the baseline reader leaves them, so a newer metric never breaks an older reader.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from stabilitygate.jsonfile import AGREEMENT_SCHEMA, COUNT_SCHEMA, check_against, read_json_file
from stabilitygate.plain import plain

if TYPE_CHECKING:
    from stabilitygate.report.model import Report

_COUNT = COUNT_SCHEMA
_TEXT = {"type": "string"}
_NULLABLE_TEXT = {"type": ["string", "null"]}
_COUNTED_ROWS = {"type": "array", "items": {"type": "object", "required": ["count"], "properties": {"count": _COUNT}}}
_VERDICTS = ["pass", "fail", "regressed", "new", "error", "unchanged"]

_CASE = {
    "type": "object",
    "required": ["id", "verdict", "reasons", "samples_requested", "samples_ok", "sample_errors", "metrics"],
    "properties": {
        "id": _TEXT,
        "line": {"type": ["integer", "null"]},
        "hash": _NULLABLE_TEXT,
        "verdict": {"enum": _VERDICTS},
        "reasons": {"type": "array", "items": _TEXT},
        "samples_requested": _COUNT,
        "samples_ok": _COUNT,
        "sample_errors": _COUNT,
        "primary": AGREEMENT_SCHEMA,
        "metrics": {"type": "object"},
        "completions": {
            "type": "array",
            "items": {"type": "object", "required": ["text", "count"], "properties": {"text": _TEXT, "count": _COUNT}},
        },
        "answers": _COUNTED_ROWS,
        "fingerprints": _COUNTED_ROWS,
        "errors": _COUNTED_ROWS,
        "finish_reasons": {"type": "object", "additionalProperties": _COUNT},
        "usage": {"type": "object", "additionalProperties": {"type": ["integer", "null"]}},
        "notes": {"type": "array", "items": _TEXT},
        "diagnostics": {"type": "object"},
        "baseline": {"type": ["object", "null"]},
    },
}
_SAMPLING = {
    "type": "object",
    "required": ["requests", "retries", "interrupted", "budget_exhausted"],
    "properties": {
        "requests": _COUNT,
        "retries": _COUNT,
        "interrupted": {"type": "boolean"},
        "budget_exhausted": {"type": "boolean"},
        "fatal_error": _NULLABLE_TEXT,
        "early_stopped": {"type": "object", "additionalProperties": _TEXT},
        "samples_file": _NULLABLE_TEXT,
        "shard": _NULLABLE_TEXT,
    },
}
_COUNTS = ("cases", "passed", "failed", "regressed", "new", "errors")
REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "tool", "suite", "verdict", "exit_code", "summary", "run", "cases"],
    "properties": {
        "schema_version": {"const": 1},
        "tool": {"type": "object", "required": ["name", "version"], "properties": {"name": _TEXT, "version": _TEXT}},
        "suite": {"type": "object", "required": ["path", "name"], "properties": {"path": _TEXT, "name": _TEXT}},
        "verdict": {"enum": ["pass", "fail", "error"]},
        "exit_code": {"enum": [0, 1, 2, 3]},
        "summary": {"type": "object", "required": list(_COUNTS), "properties": {k: _COUNT for k in _COUNTS}},
        "run": {
            "type": "object",
            "required": ["baseline", "fail_on"],
            "properties": {
                "baseline": {
                    "type": "object",
                    "required": ["path", "status"],
                    "properties": {"path": _TEXT, "status": _TEXT},
                },
                "embedding": {"type": ["object", "null"]},
                "fail_on": {"enum": ["regression", "fail", "never"]},
                "sampling": _SAMPLING,
                "changed_only": {"type": "boolean"},
            },
        },
        "cases": {"type": "array", "items": _CASE},
    },
}
_VALIDATOR = Draft202012Validator(REPORT_SCHEMA)
_HINT = "use the report.json a `stabilitygate run` (or the Action) wrote"


def check_report(data: Any, *, source: str | None = None) -> None:
    """BadInput (exit 2) naming `source` when `data` is not a report this version can read."""
    check_against(data, _VALIDATOR, what="a stabilitygate report", source=source)


def read_report(path: str | os.PathLike[str]) -> Report:
    """The report at `path`, validated; BadInput (exit 2, one line) for a missing or bad file."""
    from stabilitygate.errors import BadInput
    from stabilitygate.report.model import Report

    try:
        data = read_json_file(path, what="the report", hint=_HINT)
    except FileNotFoundError as exc:
        raise BadInput("no such file", path=str(path)) from exc
    return Report.from_dict(plain(data), source=str(path))
