"""Reading $GITHUB_OUTPUT back the way the runner does, for the tests of the Action."""

from __future__ import annotations

from pathlib import Path


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT's `name<<DELIMITER ... DELIMITER` blocks."""
    found: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        found[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return found
