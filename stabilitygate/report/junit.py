"""JUnit XML from a Report: one testcase per case, so that any CI can show the gate's cases.

fail and regressed are failures, error is an error; new is not a failure (there is nothing to
compare with yet) and says so in <system-out>. A testcase's time is the time its requests took,
summed over its samples (a report read back from JSON has no timings: 0.000).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from stabilitygate.report.model import CaseResult, Report

# Characters XML 1.0 cannot hold at all, even escaped: most C0 controls, lone surrogates, U+FFFE/F.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MESSAGE_LIMIT = 1_000  # the failure's one-line message; the full reasons go in its text


def xml_text(value: object) -> str:
    return _NOT_XML.sub("", str(value))


def render_junit(report: Report) -> str:
    suite_name = xml_text(report.suite.name) or "stabilitygate"
    cases = report.cases
    failures = sum(1 for c in cases if c.verdict in ("fail", "regressed"))
    errors = sum(1 for c in cases if c.verdict == "error")
    skipped = sum(1 for c in cases if c.verdict == "unchanged")

    root = ET.Element("testsuites", {"name": suite_name})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": suite_name,
            "tests": str(len(cases)),
            "failures": str(failures),
            "errors": str(errors),
            "skipped": str(skipped),
            "time": _seconds(sum(c.request_seconds or 0.0 for c in cases)),
        },
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", report.verdict),
        ("exit_code", report.exit_code),
        ("tool", f"{report.tool_name} {report.tool_version}".strip()),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": xml_text(value)})

    for case in cases:
        _testcase(suite, suite_name, case)

    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _seconds(value: float) -> str:
    """JUnit's time: the seconds the requests took (summed over samples that ran side by side)."""
    return f"{value:.3f}"


def _testcase(suite: ET.Element, suite_name: str, case: CaseResult) -> None:
    verdict = case.verdict
    reasons = [xml_text(r) for r in case.reasons]
    attributes = {"name": xml_text(case.id), "classname": suite_name, "time": _seconds(case.request_seconds or 0.0)}
    element = ET.SubElement(suite, "testcase", attributes)
    body = "\n".join(reasons)
    first = " ".join(reasons[0].split())[:MESSAGE_LIMIT] if reasons else verdict
    if verdict in ("fail", "regressed"):
        failure = ET.SubElement(element, "failure", {"message": first, "type": verdict})
        failure.text = body
    elif verdict == "unchanged":
        ET.SubElement(element, "skipped", {"message": first})
    elif verdict == "error":
        error = ET.SubElement(element, "error", {"message": first, "type": "could-not-measure"})
        error.text = body
    out = [f"verdict: {verdict}", *reasons]
    if verdict == "new":
        out.insert(1, "new: not compared with a baseline yet, so not a failure")
    if verdict == "warn":
        out.insert(1, "warn: a change that is not significant, so not a failure (unless --fail-on warn)")
    ET.SubElement(element, "system-out").text = "\n".join(out)
