"""The JSON Schemas of the files the gate writes, published under schema/ for editors and other tools.

`python -m stabilitygate.published_schemas` rewrites them; a test fails when one is stale. The suite's
schema is generated from its pydantic models (stabilitygate/suite_schema.py); the report's and the
baseline's are the schemas their readers validate against (report/schema.py, judge/baseline.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stabilitygate.judge.baseline import BASELINE_SCHEMA
from stabilitygate.report.schema import REPORT_SCHEMA

DIALECT = "https://json-schema.org/draft/2020-12/schema"
PUBLISHED: dict[str, tuple[str, dict[str, Any]]] = {
    "report.schema.json": ("A stabilitygate report (--report-json)", REPORT_SCHEMA),
    "baseline.schema.json": ("A stabilitygate baseline (SUITE.baseline.json)", BASELINE_SCHEMA),
}


def render(name: str) -> str:
    title, schema = PUBLISHED[name]
    document = {"$schema": DIALECT, "title": title, **schema}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path) -> None:
    for name in PUBLISHED:
        (directory / name).write_text(render(name), encoding="utf-8")


if __name__ == "__main__":
    write_all(Path(__file__).resolve().parents[1] / "schema")
