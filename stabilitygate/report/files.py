"""Writing a Report's files: the report JSON, the Markdown comment, JUnit XML (each atomically)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stabilitygate.atomic import write_text_atomic
from stabilitygate.report.json_report import dump_report
from stabilitygate.report.junit import render_junit
from stabilitygate.report.markdown import render_markdown
from stabilitygate.report.model import Report

__all__ = ["ReportFiles", "write_report_files"]


@dataclass(frozen=True)
class ReportFiles:
    """Where a report goes; None: not written."""

    report_json: Path | None = None
    markdown: Path | None = None
    junit: Path | None = None


def write_report_files(report: Report, files: ReportFiles) -> None:
    if files.report_json:
        write_text_atomic(files.report_json, dump_report(report))
    if files.markdown:
        write_text_atomic(files.markdown, render_markdown(report))
    if files.junit:
        write_text_atomic(files.junit, render_junit(report))
