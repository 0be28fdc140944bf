"""The report JSON is byte-identical for the same samples: a golden report pins every byte.

The golden files were written by the gate before the typed-results redesign (docs/design.md,
"Library API"); `python tests/report/test_golden_report.py` rewrites them after an intended change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from stabilitygate.cli import main

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    {"id": "borough", "prompt": "Where was Feynman born?", "answer": {"json": "/borough"}, "expected": "Queens"},
    {"id": "letter", "prompt": "Pick one.", "answer": {"choice": ["A", "B", "C"]}, "expected": "B",
     "thresholds": {"min_agreement": 0.9}},
    {"id": "sum", "prompt": "12 + 7?", "answer": {"number": True}, "expected": 19},
    {"id": "capital", "prompt": "Capital of France?", "expected": "paris",
     "answer": {"text": {"normalize": ["strip", "lower", "punctuation"]}}},
    {"id": "free", "prompt": "Say something.", "thresholds": {"max_unique": 2}},
    {"id": "code", "prompt": "A code.", "answer": {"regex": "code: (\\w+)"}},
    {"id": "flaky", "prompt": "Flaky."},
]  # fmt: skip
RECORDED = {
    "borough": ['{"borough": "Queens"}'] * 10,
    "letter": ["The answer is B."] * 10,
    "sum": ["19"] * 10,
    "capital": ["Paris."] * 10,
    "free": ["one", "two"] * 5,
    "code": ["code: x1"] * 10,
    "flaky": ["ok"] * 10,
}
NOW = {
    "borough": ['{"borough": "Queens"}'] * 6 + ['{"borough": "Brooklyn"}'] * 4,
    "letter": ["The answer is B."] * 7 + ["Answer: **C**"] * 2 + ["(a) or (b)"],
    "sum": ["19"] * 8 + ["20", "twenty"],  # both read 20 (number words anywhere since issue 26)
    "capital": ["Paris."] * 9 + ["paris"],
    "free": ["one", "two", "three", "one `` ``` <b>", "@team"] * 2,
    "code": ["code: x1"] * 4 + ["code: y2"] * 6,
    "flaky": ["ok"] * 8 + [None, None],
}


def write_inputs(directory: Path) -> Path:
    suite = directory / "suite.yml"
    suite.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "golden",
                "provider": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
                "sampling": {"samples": 10},
                "embedding": {"enabled": False},
                "cases": CASES,
            },
            sort_keys=False,
        )
    )
    for name, texts in (("recorded", RECORDED), ("now", NOW)):
        lines = []
        for case, values in texts.items():
            for i, text in enumerate(values):
                sample = {
                    "case": case,
                    "index": i,
                    "text": text,
                    "latency_ms": 1.0,
                    "fingerprint": f"fp_{name}",
                    "model": "m",
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                    "finish_reason": "stop",
                }
                if text is None:
                    sample.update(error="HTTP 500 from the server", fingerprint=None, usage=None, finish_reason=None)
                lines.append(json.dumps(sample))  # fmt: skip
        (directory / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return suite


def score_both(directory: Path) -> tuple[bytes, bytes]:
    """The report of recording the baseline, then the report of a later run judged against it."""
    write_inputs(directory)
    outputs = []
    for name, extra in (("recorded", ["--update-baseline"]), ("now", [])):
        out = directory / f"{name}.report.json"
        main(["score", str(directory / f"{name}.jsonl"), "--suite", "suite.yml", "--report-json", str(out), *extra])
        outputs.append(out.read_bytes())
    return outputs[0], outputs[1]


def test_reports_are_byte_identical_to_the_golden_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    recorded, now = score_both(tmp_path)
    assert recorded == (GOLDEN / "recorded.report.json").read_bytes()
    assert now == (GOLDEN / "now.report.json").read_bytes()
    assert (tmp_path / "suite.baseline.json").read_bytes() == (GOLDEN / "suite.baseline.json").read_bytes()


def test_the_golden_report_reads_back_into_the_same_bytes() -> None:
    from stabilitygate.report.json_report import dump_report
    from stabilitygate.report.read import read_report

    for name in ("recorded", "now"):
        path = GOLDEN / f"{name}.report.json"
        assert dump_report(read_report(path)).encode() == path.read_bytes()


if __name__ == "__main__":  # rewrite the golden files (after an intended change only)
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        recorded, now = score_both(Path(scratch))
        GOLDEN.mkdir(exist_ok=True)
        (GOLDEN / "recorded.report.json").write_bytes(recorded)
        (GOLDEN / "now.report.json").write_bytes(now)
        (GOLDEN / "suite.baseline.json").write_bytes((Path(scratch) / "suite.baseline.json").read_bytes())
    sys.exit(0)
