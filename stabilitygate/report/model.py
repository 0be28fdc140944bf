"""The typed report of a run: what `stabilitygate.run`, `score` and `merge` return.

Every class here is the report JSON's shape (docs/design.md §8, "Files"): `Report.to_dict()` writes
it and `Report.from_dict()` reads one back, validated against the same types
(`stabilitygate.typed_json`), whose JSON Schema is the published `schema/report.schema.json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Any, Final, Literal, cast

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from stabilitygate.against_baseline import AgainstBaseline
from stabilitygate.judge.gate import VerdictCounts
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.metrics import Agreement, Metrics, SampleCount
from stabilitygate.names import CaseId, PathText, SuiteName
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.report.judge_facts import JudgeFacts
from stabilitygate.report.run_facts import BaselineFacts, ConditionsFacts, EmbeddingFacts, RunFacts, SamplingFacts
from stabilitygate.results import (
    AnswerCount,
    CaseMeasurement,
    CompletionCount,
    Diagnostics,
    ErrorCount,
    FingerprintCount,
    VerdictName,
)
from stabilitygate.suite.model import AnswerSpec
from stabilitygate.typed_json import (
    JSON,
    Count,
    Integer,
    Share,
    Signed,
    from_json,
    json_schema,
    not_written,
    omitted_when_default,
    to_json,
)
from stabilitygate.version import TOOL_NAME, __version__

__all__ = [
    "BaselineFacts",
    "CaseResult",
    "ConditionsFacts",
    "EmbeddingFacts",
    "JudgeFacts",
    "ParsedBy",
    "Report",
    "RunFacts",
    "SamplingFacts",
    "SuiteRef",
    "Summary",
    "ToolRef",
]

RunVerdict = Literal["pass", "fail", "error"]
FAILING_VERDICTS: tuple[VerdictName, ...] = ("fail", "regressed", "error")
WARNING_VERDICTS: tuple[VerdictName, ...] = ("warn",)
SCHEMA_VERSION: Final = 1
#: The one version this reader knows (strict: `true` is not 1).
SchemaVersion = Annotated[int, Field(ge=SCHEMA_VERSION, le=SCHEMA_VERSION, strict=True)]


@dataclass(frozen=True, kw_only=True)
class Summary:
    """The verdict counts and the suite-level numbers (docs/design.md, "The numbers")."""

    cases: Count
    passed: Count
    failed: Count
    regressed: Count
    warned: Count = 0  # an older report has no warnings
    new: Count
    errors: Count
    tar_raw: Share | None = None
    tar_parsed: Share | None = None
    best_possible_accuracy: Share | None = None
    worst_possible_accuracy: Share | None = None
    accuracy_spread: Signed | None = None
    samples_requested: Count | None = None
    samples_ok: Count | None = None
    sample_errors: Count | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
    # Only in the report of a `--changed-only` run (docs/design.md, "Changed-only runs").
    unchanged: Count | None = omitted_when_default()
    requests_saved: Count | None = omitted_when_default()

    @classmethod
    def of(cls, counts: VerdictCounts, numbers: SuiteNumbers) -> Summary:
        return cls(
            cases=counts.cases,
            passed=counts.passed,
            failed=counts.failed,
            regressed=counts.regressed,
            warned=counts.warned,
            new=counts.new,
            errors=counts.errors,
        ).with_numbers(numbers)

    def with_numbers(self, numbers: SuiteNumbers) -> Summary:
        """These counts with `numbers` as the suite-level numbers (SuiteNumbers' fields are Summary's)."""
        return replace(self, **{f.name: getattr(numbers, f.name) for f in fields(numbers)})


# --- cases and the report -----------------------------------------------------------------------

ParserKind = Literal["json", "choice", "regex", "number", "text"]


@dataclass(frozen=True)
class ParsedBy:
    """The case's answer parser, as far as a reader of its numbers needs it: the agreement is on this,
    and a json answer is canonical JSON text (shown decoded)."""

    kind: ParserKind
    pointer: str | None = omitted_when_default()  # json: the RFC 6901 pointer ('' = the whole document)

    @classmethod
    def of(cls, answer: AnswerSpec | None) -> ParsedBy | None:
        if answer is None:
            return None
        kind = cast(ParserKind, answer.kind)  # AnswerSpec.kind names one of these
        return cls(kind, answer.json_ if kind == "json" else None)


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """One case in the report: what was measured, its primary agreement, the judge's verdict and
    where it stands against the baseline (`baseline`)."""

    id: CaseId
    line: Integer | None = None
    hash: str = ""
    verdict: VerdictName
    reasons: tuple[str, ...]
    samples_requested: SampleCount
    samples_ok: SampleCount
    sample_errors: SampleCount
    primary: Agreement | None = None
    metrics: Metrics
    completions: tuple[CompletionCount, ...] = ()
    answers: tuple[AnswerCount, ...] = ()
    fingerprints: tuple[FingerprintCount, ...] = ()
    errors: tuple[ErrorCount, ...] = ()
    finish_reasons: Mapping[str, Count] = field(default_factory=dict)
    usage: Mapping[str, Integer | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    diagnostics: Diagnostics = Diagnostics()
    baseline: AgainstBaseline | None = None
    parsed_by: ParsedBy | None = omitted_when_default()  # None: no parser (the answer is the completion)
    request_seconds: SkipJsonSchema[float | None] = not_written()  # JUnit's time; never in the JSON
    # Remedies (docs/design.md §16): the variants measured beside the case (`run --variants`) and the
    # concurrency probe; reported, never judged. How its samples were drawn is in `RunFacts.conditions`.
    variants: tuple[VariantResult, ...] = omitted_when_default(())
    probe: ProbeResult | None = omitted_when_default()

    @classmethod
    def of(
        cls,
        m: CaseMeasurement,
        *,
        line: int | None,
        hash: str,
        verdict: VerdictName,
        reasons: tuple[str, ...],
        primary: Agreement | None,
        baseline: AgainstBaseline | None,
        parsed_by: ParsedBy | None = None,
    ) -> CaseResult:
        """The report's case from what was measured and what the judge said."""
        return cls(
            id=m.id,
            line=line,
            hash=hash,
            verdict=verdict,
            reasons=reasons,
            samples_requested=m.samples_requested,
            samples_ok=m.samples_ok,
            sample_errors=m.sample_errors,
            primary=primary,
            metrics=m.metrics,
            completions=m.completions,
            answers=m.answers,
            fingerprints=m.fingerprints,
            errors=m.errors,
            finish_reasons=m.finish_reasons,
            usage=m.usage,
            notes=m.notes,
            diagnostics=m.diagnostics,
            baseline=baseline,
            parsed_by=parsed_by,
            request_seconds=m.request_seconds,
        )

    @property
    def measurement(self) -> CaseMeasurement:
        """What was measured about the case."""
        return CaseMeasurement(
            id=self.id,
            samples_requested=self.samples_requested,
            samples_ok=self.samples_ok,
            sample_errors=self.sample_errors,
            metrics=self.metrics,
            completions=self.completions,
            answers=self.answers,
            fingerprints=self.fingerprints,
            errors=self.errors,
            finish_reasons=self.finish_reasons,
            usage=self.usage,
            notes=self.notes,
            diagnostics=self.diagnostics,
            request_seconds=self.request_seconds,
        )

    @property
    def failing(self) -> bool:
        return self.verdict in FAILING_VERDICTS


@dataclass(frozen=True)
class SuiteRef:
    path: PathText
    name: SuiteName


@dataclass(frozen=True)
class ToolRef:
    name: str = TOOL_NAME
    version: str = __version__


@dataclass(frozen=True, kw_only=True)
class Report:
    """A judged run: what `stabilitygate.run`, `score` and `merge` return."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    tool: ToolRef = ToolRef()
    suite: SuiteRef
    verdict: RunVerdict
    exit_code: Annotated[int, Field(ge=0, le=3, strict=True)]
    summary: Summary
    run: RunFacts
    cases: tuple[CaseResult, ...]

    @property
    def tool_name(self) -> str:
        return self.tool.name

    @property
    def tool_version(self) -> str:
        return self.tool.version

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
        data = to_json(self)
        assert isinstance(data, dict)
        return data

    @classmethod
    def from_dict(cls, data: object, *, source: str | None = None) -> Report:
        """A report read back; BadInput (exit 2, one line naming `source`) when it is not one."""
        return from_json(Report, data, what="a stabilitygate report", source=source)


def report_schema() -> dict[str, Any]:
    """The published JSON Schema of the report, generated from `Report`."""
    return json_schema(Report, title="A stabilitygate report (--report-json)")
