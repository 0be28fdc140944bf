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
    bad = subprocess.run([sys.executable, "-m", "stabilitygate", "run", "x.yml", "--bogus"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--bogus" in bad.stderr
