"""The JSON Schemas of the files the gate reads and writes, published under schema/ for editors and tools.

`python -m stabilitygate.published_schemas` rewrites them; a test fails when one is stale. Each is
generated from the types the code reads the file into: the suite's pydantic models
(stabilitygate/suite_schema.py), the report's and the baseline's frozen dataclasses
(report/model.py, judge/baseline.py), and those of one line of the samples and judgments files
(samples.py, sampling/judgments_file.py), all through stabilitygate/typed_json.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from stabilitygate.judge.baseline import baseline_schema
from stabilitygate.report.model import report_schema
from stabilitygate.samples import samples_schema
from stabilitygate.sampling.judgments_file import judgments_schema
from stabilitygate.typed_json import JSON

PUBLISHED: dict[str, Callable[[], dict[str, JSON]]] = {
    "report.schema.json": report_schema,
    "baseline.schema.json": baseline_schema,
    "samples.schema.json": samples_schema,
    "judgments.schema.json": judgments_schema,
}


def render(name: str) -> str:
    return json.dumps(PUBLISHED[name](), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path) -> None:
    for name in PUBLISHED:
        (directory / name).write_text(render(name), encoding="utf-8")


if __name__ == "__main__":
    write_all(Path(__file__).resolve().parents[1] / "schema")
