"""The report JSON's shape, checked when a report is read back (merge, comment-from, the library).

Only what the gate relies on when it reads a report is required, but every number the renderers
format is typed, so a hostile or damaged report (a share that is a string, a count below zero) is
bad input, exit 2, never a crash in the Markdown. A metric this version does not know is allowed, as
long as it is a number, a boolean or null, so a newer metric never breaks an older reader.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from stabilitygate.jsonfile import AGREEMENT_SCHEMA, COUNT_SCHEMA, check_against

_COUNT = COUNT_SCHEMA
_TEXT = {"type": "string"}
_NULLABLE_TEXT = {"type": ["string", "null"]}
_COUNTED_ROWS = {"type": "array", "items": {"type": "object", "required": ["count"], "properties": {"count": _COUNT}}}
_VERDICTS = ["pass", "fail", "regressed", "warn", "new", "error", "unchanged"]
_SHARE = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_NUMBER = {"type": ["number", "null"]}
_OPTIONAL_COUNT = {"type": ["integer", "null"], "minimum": 0}
_FLAG = {"type": ["boolean", "null"]}
_SCALAR = {"type": ["number", "boolean", "null"]}
_METRICS = {
    "type": "object",
    "properties": {
        **{k: _OPTIONAL_COUNT for k in ("unique_completions", "parse_failures", "semantic_clusters",
                                        "divergence_token", "prompt_tokens", "completion_tokens", "length_cut")},
        **{k: _SHARE for k in ("mode_share", "parsed_agreement", "semantic_agreement", "accuracy",
                               "schema_valid_share")},
        **{k: {"type": ["number", "null"], "minimum": -1, "maximum": 1} for k in ("cosine_min", "cosine_mean")},
        **{k: _NUMBER for k in ("cosine_std", "semantic_entropy")},
        **{k: _FLAG for k in ("tar_raw", "tar_parsed", "any_correct", "all_correct")},
    },
    "additionalProperties": _SCALAR,
}  # fmt: skip
_MODAL = {"type": ["object", "null"], "properties": {"count": _COUNT, "n": _COUNT}}
_COMPARISON = {
    "type": ["object", "null"],
    "required": ["status"],
    "properties": {
        "status": _TEXT,
        "hash": _NULLABLE_TEXT,
        "current_hash": _NULLABLE_TEXT,
        **{k: _OPTIONAL_COUNT for k in ("k", "n", "baseline_k", "baseline_n", "holm_family")},
        **{k: _SHARE for k in ("p_value", "p_holm", "answer_p_value", "answer_p_holm", "meaning_p_value",
                               "meaning_p_holm")},
        **{k: {"type": ["number", "null"], "minimum": -1, "maximum": 1} for k in ("drop", "modal_cosine")},
        **{k: _FLAG for k in ("dropped", "answer_changed", "semantic_drift", "fingerprints_changed",
                              "drift_checked", "warned")},
        "kind": {"enum": ["answer", "completion", None]},
        "test": {"enum": ["boschloo", "fisher", None]},
        "metric": {"enum": ["parsed_agreement", "semantic_agreement", "mode_share", None]},
        "modal": _MODAL,
        "baseline_modal": _MODAL,
        "fingerprints": {"type": "array", "items": _TEXT},
        "baseline_fingerprints": {"type": "array", "items": _TEXT},
        "metrics": _METRICS,
        "deltas": {"type": "object", "additionalProperties": _NUMBER},
    },
}  # fmt: skip

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
        "metrics": _METRICS,
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
        "baseline": _COMPARISON,
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
# The entailment judge's totals in `run.judge` (report/judge_facts.py).
_JUDGE_COUNTS = ("cases", "calls", "prompt_tokens", "completion_tokens", "unreadable_replies", "failed_cases")
_SUMMARY_NUMBERS = {
    **{k: _COUNT for k in (*_COUNTS, "warned")},
    **{k: _SHARE for k in ("tar_raw", "tar_parsed", "best_possible_accuracy", "worst_possible_accuracy")},
    "accuracy_spread": {"type": ["number", "null"], "minimum": -1, "maximum": 1},
    **{k: _OPTIONAL_COUNT for k in ("samples_requested", "samples_ok", "sample_errors", "prompt_tokens",
                                    "completion_tokens", "unchanged", "requests_saved")},
}  # fmt: skip
REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "tool", "suite", "verdict", "exit_code", "summary", "run", "cases"],
    "properties": {
        "schema_version": {"const": 1},
        "tool": {"type": "object", "required": ["name", "version"], "properties": {"name": _TEXT, "version": _TEXT}},
        "suite": {"type": "object", "required": ["path", "name"], "properties": {"path": _TEXT, "name": _TEXT}},
        "verdict": {"enum": ["pass", "fail", "error"]},
        "exit_code": {"enum": [0, 1, 2, 3]},
        "summary": {
            "type": "object",
            "required": list(_COUNTS),
            "properties": _SUMMARY_NUMBERS,
        },
        "run": {
            "type": "object",
            "required": ["baseline", "fail_on"],
            "properties": {
                "baseline": {
                    "type": "object",
                    "required": ["path", "status"],
                    "properties": {"path": _TEXT, "status": _TEXT},
                },
                "embedding": {
                    "type": ["object", "null"],
                    "properties": {
                        "model": _NULLABLE_TEXT,
                        "texts_embedded": _COUNT,
                        "max_word_pieces": _OPTIONAL_COUNT,
                        "truncation": _NULLABLE_TEXT,
                    },
                },
                "fail_on": {"enum": ["regression", "fail", "warn", "never"]},
                "sampling": _SAMPLING,
                "changed_only": {"type": "boolean"},
                "judge": {"type": "object", "properties": {k: _COUNT for k in _JUDGE_COUNTS}},
            },
        },
        "cases": {"type": "array", "items": _CASE},
    },
}
_VALIDATOR = Draft202012Validator(REPORT_SCHEMA)


def check_report(data: Any, *, source: str | None = None) -> None:
    """BadInput (exit 2) naming `source` when `data` is not a report this version can read."""
    check_against(data, _VALIDATOR, what="a stabilitygate report", source=source)
