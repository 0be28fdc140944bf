"""What reading a big report costs with the typed reader, next to validating it with its published schema.

A report of CASES cases (the golden report's cases repeated, ids made unique) is written once; then,
side by side in one run: `read_report` (size check, parse, pydantic validation into the typed
`Report`), the same document validated by `jsonschema` against `schema/report.schema.json` (what a
tool reading the file might do, and what the reader did before the types were its schema), and
writing it back (`dump_report`). Best of REPEATS, in seconds.

    .venv/bin/python bench/bench_report_read.py [--cases 2000]
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import jsonschema

from stabilitygate.report.json_report import dump_report
from stabilitygate.report.model import report_schema
from stabilitygate.report.read import read_report

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "report" / "golden" / "now.report.json"
REPEATS = 3


def big_report(cases: int) -> dict[str, object]:
    document = json.loads(GOLDEN.read_text(encoding="utf-8"))
    originals = document["cases"]
    document["cases"] = [{**copy.deepcopy(originals[i % len(originals)]), "id": f"case-{i}"} for i in range(cases)]
    document["summary"]["cases"] = cases
    return document


def best(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    args = parser.parse_args()
    document = big_report(args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        size = path.stat().st_size / 1e6
        report = read_report(path)
        validator = jsonschema.Draft202012Validator(report_schema())
        typed = best(lambda: read_report(path))
        schema = best(lambda: validator.validate(json.loads(path.read_text(encoding="utf-8"))))
        written = best(lambda: dump_report(report))
    print(f"report of {args.cases} cases, {size:.1f} MB")
    print(f"  read_report (parse + typed validation): {typed:7.3f} s")
    print(f"  jsonschema validation of the same file:  {schema:7.3f} s   ({schema / typed:.1f}x the typed read)")
    print(f"  dump_report (write it back):             {written:7.3f} s")


if __name__ == "__main__":
    main()
