"""The command line's own promises: heavy imports stay out of --help and validate; errors are one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys; from stabilitygate.cli import main; code = main({args!r}); "
    "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'scipy') if m in sys.modules)); "
    "sys.exit(code)"
)


@pytest.mark.parametrize("args", [["--help"], ["validate", str(ROOT / "examples" / "suite.yml")]])
def test_help_and_validate_never_import_torch(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_version_and_unknown_flag() -> None:
    version = subprocess.run([sys.executable, "-m", "stabilitygate", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "0.1.0" in version.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "run", "x.yml", "--bogus"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--bogus" in bad.stderr


def test_domain_errors_are_one_line_and_keep_their_cause_for_debugging(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text("version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p}]\n")
    baseline = tmp_path / "suite.baseline.json"
    baseline.write_text('{"schema_version": 1, "suite": "x", "cases": {')  # truncated
    argv = [sys.executable, "-m", "stabilitygate", "run", str(suite)]
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert plain.returncode == 2
    assert plain.stderr.strip().splitlines() == [
        f"stabilitygate: error: {baseline}:1: the baseline is not valid JSON (Expecting property name enclosed in "
        "double quotes, column 47); it may be truncated: restore it from git or re-record it with --update-baseline"
    ]
    debug = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "STABILITYGATE_DEBUG": "1"},
        cwd=ROOT,
    )  # fmt: skip
    assert debug.returncode == 2 and debug.stderr.startswith(plain.stderr.strip())
    assert "json.decoder.JSONDecodeError" in debug.stderr  # the cause behind the one line
    assert "The above exception was the direct cause of the following exception" in debug.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "x.yml", "--bogus"], "No such option '--bogus'"),
        (["run", "x.yml", "--fail-on", "sometimes"], "'sometimes' is not one of 'regression', 'fail', 'warn', 'never'"),
        (["run", "x.yml", "--samples", "1"], "--samples"),
        (["score", "--suite", "x.yml"], "Missing argument 'SAMPLES...'"),
        (["bogus"], "No such command 'bogus'"),
    ],
)
def test_usage_errors_are_one_line_like_every_other_error(args: list[str], said: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", *args], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("stabilitygate: error: ") and said in lines[0]
    assert "--help" in lines[0]  # where to look next
