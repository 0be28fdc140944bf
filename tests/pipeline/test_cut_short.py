"""A run that an error no retry can fix stops (a refused key, a body template failing at run time)
reports each case it cut short once, with its cause: never "only 0 of N samples succeeded" for a case
that was never tried, nor a verdict on the few samples drawn before the stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from stabilitygate.cli import main
from tests.pipeline.conftest import RunCli, write_suite
from tests.support.app_server import AnswerApp
from tests.support.openai_server import ScriptedOpenAI

KEY = "sk-right-key-0123456789"


def error_reasons(report: dict[str, Any]) -> dict[str, list[str]]:
    return {c["id"]: c["reasons"] for c in report["cases"] if c["verdict"] == "error"}


def test_a_refused_key_is_one_line_and_the_other_cases_say_they_were_cut_short(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REFUSED_KEY", "sk-wrong-key-9876543210")
    with ScriptedOpenAI({}, default="OK", latency_s=0.01) as good, ScriptedOpenAI({}, default="OK", api_key=KEY) as bad:
        cases = [{"id": f"ticket{i}", "prompt": f"Ticket {i}?"} for i in range(6)]
        refusing = {"type": "openai", "model": "m", "base_url": bad.base_url, "api_key_env": "REFUSED_KEY"}
        cases.insert(2, {"id": "refused", "prompt": "Hello?", "provider": refusing})
        suite = write_suite(tmp_path, good.base_url, cases)
        code, report = run_cli("run", str(suite), "--no-progress")
    assert code == 3 and report is not None
    errors = error_reasons(report)
    assert errors["refused"][0].startswith("not measured: HTTP 401 from ")
    assert "authentication refused" in errors["refused"][0]
    assert errors["refused"][0].endswith("(the run stopped here, 1 of its 10 samples drawn)")
    for case in report["cases"]:
        assert not any("samples succeeded" in r for r in case["reasons"]), case["reasons"]
        if case["verdict"] == "error":
            assert len(case["reasons"]) == 1, case["reasons"]
        if case["id"] != "refused" and case["verdict"] == "error":
            (reason,) = case["reasons"]
            assert reason.startswith("not measured: the run stopped when case refused failed (")
            assert reason.endswith(" of its 10 samples drawn)")
    err = capsys.readouterr().err
    assert sum("authentication refused" in line for line in err.splitlines()) <= 2  # the cause, and its case


def test_a_template_failing_at_run_time_is_told_once_by_its_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Sample 0 renders (so `validate` passes); sample 3 uses a variable nobody defined.
    body = '{% if sample_index == 3 %}{{ nope }}{% endif %}{"question": {{ prompt|tojson }}}'
    with AnswerApp() as app:
        provider = {"type": "http", "url": app.url("/v1/answer"), "body": body, "completion_pointer": "/data/answer"}
        suite = {
            "version": 1,
            "name": "tickets",
            "provider": provider,
            "sampling": {"samples": 12, "concurrency": 1, "retries": 0},
            "embedding": {"enabled": False},
            "cases": [{"id": f"ticket{i}", "prompt": f"Ticket {i}?"} for i in range(4)],
        }
        path = tmp_path / "suite.yml"
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
        assert main(["validate", str(path)]) == 0
        report_path = tmp_path / "report.json"
        assert main(["run", str(path), "--no-progress", "--report-json", str(report_path)]) == 3
    report = json.loads(report_path.read_text())
    errors = error_reasons(report)
    assert set(errors) == {"ticket0", "ticket1", "ticket2", "ticket3"}  # every case was cut short
    assert errors["ticket0"] == [
        "not measured: provider.body: the template failed to render: 'nope' is undefined (the run stopped here, "
        "4 of its 12 samples drawn)"
    ]
    for other in ("ticket1", "ticket2", "ticket3"):
        assert errors[other] == ["not measured: the run stopped when case ticket0 failed (3 of its 12 samples drawn)"]
    assert report["summary"]["errors"] == 4
