"""JUnit XML: one testcase per case, parseable whatever the model wrote."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from stabilitygate.report.junit import render_junit
from stabilitygate.report.model import Report


def rcase(cid: str, verdict: str, reasons: list[str]) -> dict[str, Any]:
    counts = {"samples_requested": 10, "samples_ok": 10, "sample_errors": 0}
    return {"id": cid, "verdict": verdict, "reasons": reasons, "metrics": {}, **counts}


def report(cases: list[dict[str, Any]]) -> Report:
    counts = {k: 0 for k in ("cases", "passed", "failed", "regressed", "new", "errors")}
    return Report.from_dict(
        {
            "schema_version": 1,
            "suite": {"name": "checkout assistant", "path": "s.yml"},
            "tool": {"name": "llm-stability-gate", "version": "0.1.0"},
            "verdict": "fail",
            "exit_code": 1,
            "summary": counts,
            "run": {"baseline": {"path": "s.baseline.json", "status": "compared"}, "fail_on": "regression"},
            "cases": cases,
        }
    )


CASES = [
    rcase("ok", "pass", ["agreement 10/10 against 10/10 in the baseline: no drop"]),
    rcase("bad", "fail", ["3 unique completions of 10 where at most 1 are allowed (max_unique)", "measured: x"]),
    rcase("worse", "regressed", ["agreement 6/10 against 10/10 in the baseline: a drop of 0.40, p = 0.021"]),
    rcase("fresh", "new", ["no baseline yet: run with --update-baseline to record it"]),
    rcase("down", "error", ["6 of 10 samples failed, more than the 5 allowed"]),
]


def test_one_testcase_per_case_with_counts() -> None:
    root = ET.fromstring(render_junit(report(CASES)))
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "checkout assistant"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "2", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["ok", "bad", "worse", "fresh", "down"]
    assert all(c.get("classname") == "checkout assistant" for c in cases.values())
    assert cases["ok"].find("failure") is None and cases["ok"].find("error") is None
    failure = cases["bad"].find("failure")
    assert failure is not None and failure.get("type") == "fail"
    assert failure.get("message") == CASES[1]["reasons"][0] and "measured: x" in (failure.text or "")
    worse = cases["worse"].find("failure")
    assert worse is not None and worse.get("type") == "regressed" and "p = 0.021" in (worse.get("message") or "")
    error = cases["down"].find("error")
    assert error is not None and "6 of 10" in (error.get("message") or "")
    fresh = cases["fresh"]
    assert fresh.find("failure") is None and fresh.find("skipped") is None
    assert "not a failure" in (fresh.findtext("system-out") or "")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "fail" and props["exit_code"] == "1"


def test_control_characters_and_markup_in_model_text() -> None:
    nasty = "answer changed: '\x00\x1b[31m<b>&</b>]]>\ufffe\ud800' where the baseline had 'A'"
    text = render_junit(report([rcase("x", "regressed", [nasty])]))
    root = ET.fromstring(text.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    assert failure.get("message") == "answer changed: '[31m<b>&</b>]]>' where the baseline had 'A'"
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')


def test_deterministic_and_empty() -> None:
    assert render_junit(report(CASES)) == render_junit(report(CASES))
    root = ET.fromstring(render_junit(report([])))
    assert root.find("testsuite").get("tests") == "0"  # type: ignore[union-attr]


def test_each_testcase_takes_the_time_its_requests_took(tmp_path: Path) -> None:
    """Through the command: the samples' latencies (here from a samples file) are each case's time."""
    import json

    from stabilitygate.cli import main

    suite = tmp_path / "suite.yml"
    suite.write_text(
        "version: 1\nname: timed\nprovider: {type: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
        "embedding: {enabled: false}\ncases: [{id: quick, prompt: p}, {id: slow, prompt: q}]\n"
    )
    latencies = {"quick": [12.5] * 4, "slow": [250.0, 1250.0, 500.0, 1000.0]}
    lines = [
        json.dumps({"case": case, "index": i, "text": "ok", "latency_ms": ms})
        for case, values in latencies.items()
        for i, ms in enumerate(values)
    ]
    (tmp_path / "samples.jsonl").write_text("\n".join(lines) + "\n")
    junit = tmp_path / "junit.xml"
    assert main(["score", str(tmp_path / "samples.jsonl"), "--suite", str(suite), "--junit", str(junit)]) == 0
    root = ET.parse(junit).getroot()
    times = {c.get("name"): c.get("time") for c in root.iter("testcase")}
    assert times == {"quick": "0.050", "slow": "3.000"}
    assert root.find("testsuite").get("time") == "3.050"  # type: ignore[union-attr]
