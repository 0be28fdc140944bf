"""The typed report of a run: what `stabilitygate.run`, `score` and `merge` return.

`Report.to_dict()` is exactly the report JSON (docs/design.md §8, "Files"); `Report.from_dict()`
reads one back, validated (`report/schema.py`). Floats are rounded once, in `to_dict()`, by
`stabilitygate.plain`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from stabilitygate.plain import plain
from stabilitygate.report.judge_facts import JudgeFacts
from stabilitygate.report.run_facts import BaselineFacts, EmbeddingFacts, RunFacts, SamplingFacts
from stabilitygate.report.schema import check_report
from stabilitygate.results import JSON, Agreement, CaseMeasurement, VerdictName
from stabilitygate.version import TOOL_NAME, __version__

__all__ = [
    "BaselineFacts",
    "CaseResult",
    "EmbeddingFacts",
    "JudgeFacts",
    "Report",
    "RunFacts",
    "SamplingFacts",
    "SuiteRef",
    "Summary",
]

RunVerdict = Literal["pass", "fail", "error"]
FAILING_VERDICTS: tuple[VerdictName, ...] = ("fail", "regressed", "error")
WARNING_VERDICTS: tuple[VerdictName, ...] = ("warn",)
SCHEMA_VERSION = 1


COUNT_KEYS = ("cases", "passed", "failed", "regressed", "warned", "new", "errors")
#: Counts an older report may lack (read as 0).
_LATER_COUNTS = ("warned",)


@dataclass(frozen=True)
class Summary:
    """The suite-level numbers and the verdict counts (docs/design.md, "The numbers")."""

    cases: int
    passed: int
    failed: int
    regressed: int
    warned: int
    new: int
    errors: int
    tar_raw: float | None = None
    tar_parsed: float | None = None
    best_possible_accuracy: float | None = None
    worst_possible_accuracy: float | None = None
    accuracy_spread: float | None = None
    samples_requested: int | None = None
    samples_ok: int | None = None
    sample_errors: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # Only in the report of a `--changed-only` run (docs/design.md, "Changed-only runs").
    unchanged: int | None = None
    requests_saved: int | None = None

    def to_json(self) -> dict[str, JSON]:
        data = asdict(self)
        for key in ("unchanged", "requests_saved"):
            if data[key] is None:
                del data[key]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Summary:
        counts = {key: int(data[key] if key in data or key not in _LATER_COUNTS else 0) for key in COUNT_KEYS}
        return cls(**counts).with_numbers(data)

    def with_numbers(self, data: Mapping[str, JSON]) -> Summary:
        """These counts with the suite-level numbers of `data` (keys it lacks stay null)."""
        numbers: dict[str, Any] = {f: data[f] for f in self.__dataclass_fields__ if f not in COUNT_KEYS and f in data}
        return replace(self, **numbers)


# --- cases and the report -----------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    """One case in the report: what was measured, its primary agreement, the judge's verdict."""

    id: str
    line: int | None
    hash: str
    verdict: VerdictName
    reasons: tuple[str, ...]
    measurement: CaseMeasurement
    primary: Agreement | None
    comparison: Mapping[str, JSON] | None  # the report's `baseline` key: values and p-values

    @property
    def failing(self) -> bool:
        return self.verdict in FAILING_VERDICTS

    def to_json(self) -> dict[str, JSON]:
        m = self.measurement
        return {
            "id": self.id,
            "line": self.line,
            "hash": self.hash,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "samples_requested": m.samples_requested,
            "samples_ok": m.samples_ok,
            "sample_errors": m.sample_errors,
            "primary": self.primary.to_json() if self.primary is not None else None,
            "metrics": dict(m.metrics),
            "completions": list(m.completions),
            "answers": list(m.answers),
            "fingerprints": list(m.fingerprints),
            "errors": list(m.errors),
            "finish_reasons": dict(m.finish_reasons),
            "usage": dict(m.usage),
            "notes": list(m.notes),
            "diagnostics": dict(m.diagnostics),
            "baseline": dict(self.comparison) if self.comparison is not None else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> CaseResult:
        measurement = CaseMeasurement(
            id=str(data["id"]),
            samples_requested=int(data["samples_requested"]),
            samples_ok=int(data["samples_ok"]),
            sample_errors=int(data["sample_errors"]),
            metrics=dict(data.get("metrics") or {}),
            completions=list(data.get("completions") or []),
            answers=list(data.get("answers") or []),
            fingerprints=list(data.get("fingerprints") or []),
            errors=list(data.get("errors") or []),
            finish_reasons=dict(data.get("finish_reasons") or {}),
            usage=dict(data.get("usage") or {}),
            notes=list(data.get("notes") or []),
            diagnostics=dict(data.get("diagnostics") or {}),
        )
        return cls(
            id=str(data["id"]),
            line=data.get("line"),
            hash=str(data.get("hash") or ""),
            verdict=data["verdict"],
            reasons=tuple(str(r) for r in data.get("reasons") or ()),
            measurement=measurement,
            primary=Agreement.from_json(data.get("primary")),
            comparison=data.get("baseline"),
        )


@dataclass(frozen=True)
class SuiteRef:
    path: str
    name: str


@dataclass(frozen=True)
class Report:
    """A judged run: what `stabilitygate.run`, `score` and `merge` return."""

    suite: SuiteRef
    verdict: RunVerdict
    exit_code: int
    summary: Summary
    run: RunFacts
    cases: tuple[CaseResult, ...]
    tool_name: str = TOOL_NAME
    tool_version: str = __version__
    schema_version: int = SCHEMA_VERSION

    @property
    def failing_cases(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.failing)

    @property
    def noted_cases(self) -> tuple[CaseResult, ...]:
        """The cases an annotation points at: failing ones and warnings, in suite order."""
        return tuple(c for c in self.cases if c.failing or c.verdict in WARNING_VERDICTS)

    def case(self, case_id: str) -> CaseResult:
        """The result of case `case_id`; KeyError when the report has no such case."""
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)

    def with_exit_code(self, code: int) -> Report:
        return replace(self, exit_code=code)

    def to_dict(self) -> dict[str, JSON]:
        """Exactly the report JSON (docs/design.md, "Files"), floats rounded."""
        data = {
            "schema_version": self.schema_version,
            "tool": {"name": self.tool_name, "version": self.tool_version},
            "suite": {"path": self.suite.path, "name": self.suite.name},
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "summary": self.summary.to_json(),
            "run": self.run.to_json(),
            "cases": [c.to_json() for c in self.cases],
        }
        result: dict[str, JSON] = plain(data)
        return result

    @classmethod
    def from_dict(cls, data: JSON, *, source: str | None = None) -> Report:
        """A report read back; BadInput (exit 2, one line naming `source`) when it is not one."""
        check_report(data, source=source)
        return cls(
            suite=SuiteRef(str(data["suite"]["path"]), str(data["suite"]["name"])),
            verdict=data["verdict"],
            exit_code=int(data["exit_code"]),
            summary=Summary.from_json(data["summary"]),
            run=RunFacts.from_json(data["run"]),
            cases=tuple(CaseResult.from_json(c) for c in data["cases"]),
            tool_name=str(data["tool"]["name"]),
            tool_version=str(data["tool"]["version"]),
            schema_version=int(data["schema_version"]),
        )
