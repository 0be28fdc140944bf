"""Helpers for end-to-end tests of the pipeline: suites written to disk, the CLI run in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from stabilitygate.cli import main


def write_suite(directory: Path, base_url: str, cases: list[dict[str, Any]], **top: Any) -> Path:
    suite = {
        "version": 1,
        "name": top.pop("name", "e2e"),
        "provider": {"type": "openai", "model": "scripted", "base_url": base_url, "params": {"temperature": 0}},
        # A baseline of 10 as well (the default would be 5 x samples): the tests read "x/10 against y/10".
        "sampling": {
            "samples": 10,
            "baseline_samples": 10,
            "concurrency": 4,
            "timeout_s": 10,
            "retries": 3,
            "max_retry_wait_s": 0.2,
        },
        "embedding": {"enabled": False},
        "cases": cases,
        **top,
    }
    path = directory / "suite.yml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


RunCli = Callable[..., tuple[int, dict[str, Any] | None]]


@pytest.fixture
def run_cli(tmp_path: Path) -> RunCli:
    """Run `stabilitygate ARGS... --report-json R` in-process; return (exit code, report or None)."""

    def run(*args: str, report: Path | None = None) -> tuple[int, dict[str, Any] | None]:
        report = report or tmp_path / "report.json"
        report.unlink(missing_ok=True)
        code = main([*args, "--report-json", str(report)])
        return code, json.loads(report.read_text()) if report.exists() else None

    return run
