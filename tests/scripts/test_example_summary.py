"""scripts/example.sh ends by saying which failure is meant and what to try next (scripts/example_summary.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "example_summary.py"


def closing(tmp_path: Path, verdicts: dict[str, str], code: int) -> list[str]:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"cases": [{"id": cid, "verdict": v} for cid, v in verdicts.items()]}))
    done = subprocess.run([sys.executable, str(SCRIPT), str(report), str(code)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def test_the_case_meant_to_fail_is_said_to_be_meant(tmp_path: Path) -> None:
    lines = closing(tmp_path, {"capital": "new", "sampled": "fail"}, 1)
    assert lines[0].startswith("The ❌ above is meant: the case `sampled` samples at temperature 0.9 on purpose")
    assert lines[-1].startswith("Next: record a baseline with `scripts/example.sh --update-baseline`")
    assert "docs/first-hour.md" in lines[-1]


def test_any_other_failure_is_said_to_be_unexpected(tmp_path: Path) -> None:
    lines = closing(tmp_path, {"capital": "fail", "sampled": "fail"}, 1)
    assert lines[0] == "Not expected: capital failed (only `sampled` is meant to); the reasons are above."


def test_the_case_meant_to_fail_is_the_example_s_unstable_one() -> None:
    suite = yaml.safe_load((ROOT / "examples" / "suite.yml").read_text())
    sampled = next(c for c in suite["cases"] if c["id"] == "sampled")
    assert sampled["provider"]["params"]["temperature"] == 0.9 and sampled["thresholds"]["max_unique"] == 2
    example = (ROOT / "scripts" / "example.sh").read_text()
    assert 'scripts/example_summary.py out/report.json "$code"' in example  # the script ends with it
