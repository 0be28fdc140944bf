#!/usr/bin/env python3
"""The closing lines of scripts/example.sh: what the example's exit code means, and what to try next.

    python scripts/example_summary.py out/report.json EXIT_CODE

The example's `sampled` case samples at temperature 0.9 on purpose, to show the gate's numbers on an
unstable case, and fails its `max_unique` threshold: a red mark and exit 1 that a first-time reader
should not take for a broken install. Any other failing case is said to be unexpected.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MEANT_TO_FAIL = "sampled"
NEXT = (
    "Next: record a baseline with `scripts/example.sh --update-baseline` and run `scripts/example.sh` again,"
    " which then compares every case with it; judge the same samples again without the model with"
    " `.venv/bin/stabilitygate score out/samples.jsonl --suite examples/suite.yml --baseline"
    " out/example.baseline.json`; write a suite for your own application: docs/first-hour.md."
)


def closing_lines(report: dict[str, object], code: int) -> list[str]:
    cases = report.get("cases")
    rows = [c for c in cases if isinstance(c, dict)] if isinstance(cases, list) else []
    failing = [c["id"] for c in rows if c.get("verdict") in ("fail", "regressed", "error")]
    lines = []
    if code == 1 and failing == [MEANT_TO_FAIL]:
        lines.append(
            f"The ❌ above is meant: the case `{MEANT_TO_FAIL}` samples at temperature 0.9 on purpose, to show what"
            " the gate reports for an unstable case, so it fails its threshold and the run exits 1. The other"
            " cases decode greedily and are stable."
        )
    elif failing:
        unexpected = [c for c in failing if c != MEANT_TO_FAIL]
        lines.append(
            f"Not expected: {', '.join(unexpected)} failed (only `{MEANT_TO_FAIL}` is meant to); the reasons are above."
        )
    elif code == 0:
        lines.append("Every case passed (the gate's verdict on the recorded baseline, or a baseline just recorded).")
    lines.append(NEXT)
    return lines


def main(argv: list[str]) -> int:
    report_path, code = Path(argv[0]), int(argv[1])
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError):
        report = {}
    print("\n".join(closing_lines(report, code)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
