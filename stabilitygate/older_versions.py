"""Reports and baselines an older version wrote, read as this version's: the keys it renamed, mapped.

Version 2 renamed what no longer said what was true (docs/design.md §8, "Versions"): the run's
corrected p-values, no longer Holm's since the family became a min-p step-down, and the entailment
judge's keys, which shared their name with the verdict layer. `merge`, `comment-from` and
`score --baseline` still read a version-1 file; anything else about it is validated as usual.
A report written before the report said the job's `outcome` beside its `verdict` gets it from its exit
code, which it always held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stabilitygate.errors import job_outcome
from stabilitygate.typed_json import SCHEMA_VERSION

__all__ = ["baseline_as_current", "report_as_current"]

_COMPARED_V1 = {
    "p_holm": "p_adjusted",
    "holm_family": "family_size",
    "answer_p_holm": "answer_p_adjusted",
    "meaning_p_holm": "meaning_p_adjusted",
    "parsed_p_holm": "parsed_p_adjusted",
}
_METRICS_V1 = {
    "judge_calls": "entailment_calls",
    "judge_prompt_tokens": "entailment_prompt_tokens",
    "judge_completion_tokens": "entailment_completion_tokens",
}
_DIAGNOSTICS_V1 = {"judge_error": "entailment_error", "judge_unreadable": "entailment_unreadable"}
_RUN_V1 = {"judge": "entailment"}

Change = Callable[[object], object]


def report_as_current(data: object) -> object:
    """A version-1 report's keys renamed as version 2 writes them, and the `outcome` of a report
    without one; any other value as it is."""
    if not _is_version_1(data):
        return _with_outcome(data)
    case = _changing({"metrics": _metrics, "diagnostics": _diagnostics, "baseline": _compared})
    return _with_outcome(_changing({"run": _renaming(_RUN_V1), "cases": _each(case)}, current=True)(data))


def _with_outcome(data: object) -> object:
    """The report with `outcome` said from its exit code when it has none (a valid exit code only:
    anything else is left for the validation to name)."""
    if not isinstance(data, Mapping) or "outcome" in data:
        return data
    code = data.get("exit_code")
    if type(code) is not int or code not in (0, 1, 3):
        return data
    return {**data, "outcome": job_outcome(code)}


def baseline_as_current(data: object) -> object:
    """A version-1 baseline's keys renamed as version 2 writes them; any other value as it is."""
    if not _is_version_1(data):
        return data
    return _changing({"cases": _each_value(_changing({"metrics": _metrics}))}, current=True)(data)


def _is_version_1(data: object) -> bool:
    version = data.get("schema_version") if isinstance(data, Mapping) else None
    return type(version) is int and version == 1  # strict: `true` is not 1


def _renaming(names: Mapping[str, str]) -> Change:
    def rename(value: object) -> object:
        if not isinstance(value, Mapping):
            return value  # left for the validation to name
        return {names.get(str(k), k): v for k, v in value.items()}

    return rename


_metrics = _renaming(_METRICS_V1)
_diagnostics = _renaming(_DIAGNOSTICS_V1)


def _compared(value: object) -> object:
    return _changing({"metrics": _metrics})(_renaming(_COMPARED_V1)(value))


def _changing(changes: Mapping[str, Change], *, current: bool = False) -> Change:
    """An object with the named keys' values changed (and marked as this version's, when `current`)."""

    def change(value: object) -> object:
        if not isinstance(value, Mapping):
            return value
        changed = {k: changes[k](v) if k in changes else v for k, v in value.items()}
        return {**changed, "schema_version": SCHEMA_VERSION} if current else changed

    return change


def _each(change: Change) -> Change:
    return lambda value: [change(v) for v in value] if isinstance(value, list) else value


def _each_value(change: Change) -> Change:
    return lambda value: {k: change(v) for k, v in value.items()} if isinstance(value, Mapping) else value
