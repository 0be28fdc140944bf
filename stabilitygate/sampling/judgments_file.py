"""The judgments beside a samples file (docs/design.md §8): `run.jsonl` -> `run.judgments.jsonl`.

The entailment judge's answers are recorded with the samples they judged, so `score` rebuilds a
run's clusters without asking the judge again. They sit in a file of their own so that a samples
file reads exactly as before. One JSON object a line: `judge` (the judge key), `premise` and
`hypothesis` (sha256 of the texts), `case`, `label`, `reply`, `usage`; appended and flushed as each
judgment arrives. Read back strictly, like the samples.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.atomic import open_lines
from stabilitygate.bounded import MAX_SAMPLES_BYTES, read_bytes_bounded
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import parse_line
from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.typed_json import JSON, fields_of, from_json, json_schema

log = logging.getLogger(__name__)
SUFFIX = ".judgments.jsonl"


@dataclass(frozen=True, kw_only=True)
class JudgmentLine(Judgment, PairKey):
    """One line of the judgments file: the pair's key, the judgment, and the case that asked it."""

    case: str


def judgments_schema() -> dict[str, JSON]:
    """The published JSON Schema of one line of the judgments file, generated from `JudgmentLine`."""
    return json_schema(JudgmentLine, title="One line of a stabilitygate judgments file (beside --samples-out)")


def judgments_path(samples_path: str | os.PathLike[str]) -> Path:
    """The judgments file of a samples file: its name with `.jsonl` (if any) replaced by `.judgments.jsonl`."""
    path = Path(samples_path)
    stem = path.name.removesuffix(".jsonl")
    return path.with_name(stem + SUFFIX)


def judgment_line(key: PairKey, judgment: Judgment, case: str) -> str:
    record = {"judge": key.judge, "premise": key.premise, "hypothesis": key.hypothesis, "case": case}
    return json.dumps({**record, **judgment.to_json()}, ensure_ascii=False, separators=(",", ":"))


def start_judgments_file(path: str | os.PathLike[str]) -> None:
    """An empty judgments file at `path` (a run records afresh, as its samples file)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        open_lines(path, append=False).close()
    except OSError as exc:
        raise BadInput(f"cannot write the judgments file: {exc.strerror or exc}", path=str(path)) from exc


def append_judgment(path: str | os.PathLike[str], key: PairKey, judgment: Judgment, case: str) -> None:
    """One judgment appended as its line, flushed at once (an interrupted run keeps what it asked)."""
    try:
        with open_lines(path, append=True) as handle:
            handle.write(judgment_line(key, judgment, case) + "\n")
    except OSError as exc:
        raise BadInput(f"cannot write the judgments file: {exc.strerror or exc}", path=str(path)) from exc


def read_judgments(path: str | os.PathLike[str]) -> dict[PairKey, Judgment]:
    """The judgments of a judgments file ({} when there is none); BadInput at the line of a broken one.

    A last line cut short (an interrupted run) is dropped with a warning, as in the samples file.
    """
    shown = str(path)
    try:
        data = read_bytes_bounded(path, limit=MAX_SAMPLES_BYTES, what="the judgments file")
    except FileNotFoundError:
        return {}
    lines = data.split(b"\n")
    cut_last = not data.endswith(b"\n") and data != b""
    found: dict[PairKey, Judgment] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = parse_line(raw)
        except ValueError as exc:
            if cut_last and number == len(lines):
                log.warning("%s:%d: dropped the last line, cut short (the run was interrupted?)", shown, number)
                continue
            raise BadInput(f"{exc} (one judgment a line)", path=shown, line=number) from exc
        recorded = from_json(JudgmentLine, obj, what="a judgment line", source=shown, line=number)
        found[PairKey(**fields_of(recorded, PairKey))] = Judgment(**fields_of(recorded, Judgment))
    return found
