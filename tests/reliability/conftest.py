"""The reliability area: faults injected by a loopback OpenAI-compatible server, fuzzed input, secrets.

Every scenario records a row (what was injected, how many runs survived, samples lost); at the end
of the session the rows become the table in the README (`out/reliability.md`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.cli import main
from stabilitygate.sampling.retry import DEFAULT_BASE_S, Backoff
from stabilitygate.suite.model import Sampling

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Row:
    fault: str
    injected: int
    runs: int
    survived: int
    lost: int
    note: str = ""


ROWS: dict[str, Row] = {}
# Only reached when the code under test is broken: the test then fails instead of hanging.
GUARD_S = 60


@pytest.fixture
def record() -> Callable[[Row], None]:
    def add(row: Row) -> None:
        old = ROWS.get(row.fault)
        if old is not None:  # parametrized scenarios of one fault kind add up
            row = Row(
                row.fault,
                old.injected + row.injected,
                old.runs + row.runs,
                old.survived + row.survived,
                old.lost + row.lost,
                old.note or row.note,
            )
        ROWS[row.fault] = row

    return add


@pytest.fixture
def backoff_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the sampler's retries ask for, in order: recorded instead of slept, so runs take no backoff time."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(0)  # still a suspension point, as a real wait is

    made = Backoff.from_sampling

    def recording(sampling: Sampling, *, base_s: float = DEFAULT_BASE_S) -> Backoff:
        return dataclasses.replace(made(sampling, base_s=base_s), sleep=record)

    monkeypatch.setattr(Backoff, "from_sampling", recording)
    return waits


def table() -> str:
    lines = [
        "| fault | injected | runs | runs survived | samples lost | what the gate did |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in ROWS.values():
        lines.append(f"| {row.fault} | {row.injected} | {row.runs} | {row.survived} | {row.lost} | {row.note} |")
    return "\n".join(lines) + "\n"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if ROWS:
        out = ROOT / "out"
        out.mkdir(exist_ok=True)
        (out / "reliability.md").write_text(table())


def run_gate(*args: str, report: Path) -> tuple[int, dict[str, Any] | None]:
    report.unlink(missing_ok=True)
    code = main([*args, "--report-json", str(report)])
    return code, json.loads(report.read_text()) if report.exists() else None
