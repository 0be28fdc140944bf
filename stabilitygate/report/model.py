"""The typed report of a run: what `stabilitygate.run`, `score` and `merge` return.

Every class here is the report JSON's shape (docs/design.md §8, "Files"): `Report.to_dict()` writes
it and `Report.from_dict()` reads one back, validated against the same types
(`stabilitygate.typed_json`), whose JSON Schema is the published `schema/report.schema.json`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Annotated

from pydantic import Field

from stabilitygate.against_baseline import AgainstBaseline
from stabilitygate.errors import JobOutcome
from stabilitygate.judge.gate import RunVerdict, VerdictCounts
from stabilitygate.measure.summary import SuiteNumbers
from stabilitygate.metrics import Agreement
from stabilitygate.names import PathText, SuiteName
from stabilitygate.older_versions import report_as_current
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.report.entailment_facts import EntailmentFacts
from stabilitygate.report.run_facts import BaselineFacts, ConditionsFacts, RunFacts, SamplingFacts
from stabilitygate.results import (
    CaseMeasurement,
    EmbeddingFacts,
    VerdictName,
)
from stabilitygate.suite.model import AnswerSpec, ParserKind
from stabilitygate.typed_json import (
    JSON,
    SCHEMA_VERSION,
    Count,
    Integer,
    SchemaVersion,
    fields_of,
    from_json,
    json_schema,
    omitted_when_default,
    to_json,
)
from stabilitygate.version import TOOL_NAME, __version__

__all__ = [
    "BaselineFacts",
    "CaseResult",
    "ConditionsFacts",
    "EmbeddingFacts",
    "EntailmentFacts",
    "ParsedBy",
    "Report",
    "RunFacts",
    "SamplingFacts",
    "SuiteRef",
    "Summary",
    "ToolRef",
]

FAILING_VERDICTS: tuple[VerdictName, ...] = ("fail", "regressed", "error")
WARNING_VERDICTS: tuple[VerdictName, ...] = ("warn",)


@dataclass(frozen=True, kw_only=True)
class Summary(SuiteNumbers, VerdictCounts):  # the fields of both, flat in one JSON object
    """The verdict counts and the suite-level numbers (docs/design.md, "The numbers")."""

    # Only in the report of a `--changed-only` run (docs/design.md, "Changed-only runs").
    unchanged: Count | None = omitted_when_default()
    requests_saved: Count | None = omitted_when_default()

    @classmethod
    def of(cls, counts: VerdictCounts, numbers: SuiteNumbers) -> Summary:
        return cls(**fields_of(counts), **fields_of(numbers))

    def with_numbers(self, numbers: SuiteNumbers) -> Summary:
        """These counts with `numbers` as the suite-level numbers."""
        return replace(self, **fields_of(numbers))


# --- cases and the report -----------------------------------------------------------------------


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
        return cls(answer.kind, answer.json_ if answer.kind == "json" else None)


@dataclass(frozen=True, kw_only=True)
class CaseResult(CaseMeasurement):  # what was measured is CaseMeasurement's fields, flat in the JSON
    """One case in the report: what was measured, its primary agreement, the judge's verdict and
    where it stands against the baseline (`baseline`)."""

    line: Integer | None = None
    hash: str = ""
    verdict: VerdictName
    reasons: tuple[str, ...]
    primary: Agreement | None = None
    baseline: AgainstBaseline | None = None
    parsed_by: ParsedBy | None = omitted_when_default()  # None: no parser (the answer is the completion)
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
            **fields_of(m),
            line=line,
            hash=hash,
            verdict=verdict,
            reasons=reasons,
            primary=primary,
            baseline=baseline,
            parsed_by=parsed_by,
        )

    @property
    def measurement(self) -> CaseMeasurement:
        """What was measured about the case, without the judge's word."""
        return CaseMeasurement(**fields_of(self, CaseMeasurement))

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
    verdict: RunVerdict  # what the run found: fail when a case failed or regressed, whatever --fail-on says
    exit_code: Annotated[int, Field(ge=0, le=3, strict=True)]
    outcome: JobOutcome  # what the job does under run.fail_on (exit_code in words), beside the finding
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

    def to_dict(self) -> dict[str, JSON]:
        """Exactly the report JSON (docs/design.md, "Files"), floats rounded."""
        data = to_json(self)
        assert isinstance(data, dict)
        return data

    @classmethod
    def from_dict(cls, data: object, *, source: str | None = None) -> Report:
        """A report read back; BadInput (exit 2, one line naming `source`) when it is not one."""
        return from_json(Report, report_as_current(data), what="a stabilitygate report", source=source)


def report_schema() -> dict[str, JSON]:
    """The published JSON Schema of the report, generated from `Report`."""
    return json_schema(Report, title="A stabilitygate report (--report-json)")
