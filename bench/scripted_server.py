"""The scripted OpenAI server in its own process, as the benches use it (sharing the GIL with the
client would measure the test server, not the gate)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def scripted_server(script: Path) -> Iterator[str]:
    """Serve SCRIPT.json (see tests/support/openai_server.py) on loopback; yields its base URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.support.openai_server", "--port", "0", "--script", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=10)
