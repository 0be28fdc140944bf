"""docs/first-hour.md runs as written: its commands, in order, against a stand-in for the reader's app.

The page is read top to bottom. Each ```bash block runs in a fresh `bash -e -o pipefail` in the
project's directory, with `stabilitygate` and `python` from this environment on PATH and `GATE` the
checkout; it must exit 0, or the code of an `<!-- exit N -->` line before it. A block after
`<!-- file: PATH -->` is written to PATH. A ```text block after `<!-- output -->` lists lines the
block above printed, each of which must appear in its output as written. `<!-- app: v2 -->` is the
pull request: the stand-in classifier (tests/support/ticket_app.py) changes its behaviour there.
```console blocks (installs, git) are for the reader only. The page's `127.0.0.1:8000` is the stand-in's
address, whatever port it got.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ticket_app import TicketApp

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "first-hour.md"
ADDRESS = "127.0.0.1:8000"
MARKER = re.compile(r"<!-- (file|exit|output|app)(?:[:\s]\s*(.+?))? -->")


@dataclass
class Block:
    lang: str
    text: str
    markers: dict[str, str] = field(default_factory=dict)


def steps(page: str) -> list[Block | str]:
    """The page's fenced blocks with their markers, and the app switches (`"app: v2"`), in order."""
    out: list[Block | str] = []
    pending: dict[str, str] = {}
    lines = iter(page.splitlines())
    for line in lines:
        marker = MARKER.fullmatch(line.strip())
        if marker and marker[1] == "app":
            out.append(f"app: {marker[2]}")
        elif marker:
            pending[marker[1]] = marker[2] or ""
        elif line.startswith("```"):
            body = []
            for inner in lines:
                if inner.startswith("```"):
                    break
                body.append(inner)
            out.append(Block(line[3:].strip(), "\n".join(body) + "\n", pending))
            pending = {}
    return out


def test_the_page_is_read_in_an_order_the_harness_knows() -> None:
    found = steps(PAGE.read_text())
    blocks = [s for s in found if isinstance(s, Block)]
    assert {b.lang for b in blocks} <= {"bash", "yaml", "text", "console"}
    assert all("file" in b.markers for b in blocks if b.lang == "yaml")  # every file the page shows is written
    assert all("output" in b.markers for b in blocks if b.lang == "text")
    assert sum(b.lang == "bash" for b in blocks) >= 6 and "app: v2" in found


def test_the_first_hour_runs_as_written(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "GATE": str(ROOT),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    with TicketApp() as app:
        here = app.root_url.removeprefix("http://")
        last = ""
        for step in steps(PAGE.read_text()):
            if isinstance(step, str):
                app.version = int(step.removeprefix("app: v"))
                continue
            text = step.text.replace(ADDRESS, here)
            if "file" in step.markers:
                path = project / step.markers["file"]
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            elif step.lang == "bash":
                done = subprocess.run(
                    ["bash", "-e", "-o", "pipefail", "-c", text],
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
                last = done.stdout + done.stderr
                assert done.returncode == int(step.markers.get("exit", "0")), f"{step.text}\n{last}"
            elif "output" in step.markers:
                for line in filter(None, text.splitlines()):
                    assert line in last, f"not printed: {line!r}\nin:\n{last}"
        assert app.version == 2 and app.requests > 0
    comment = (project / "comment.md").read_text()
    assert "| double-charge | 2 | 20/30 on the choice |" in comment and "answer 'billing' → 'refund'" in comment
    assert (project / ".stabilitygate" / "report.json").is_file()  # where the Action's run left its reports
