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
from pathlib import Path
from typing import Any

from stabilitygate.atomic import open_lines
from stabilitygate.bounded import MAX_SAMPLES_BYTES, read_bytes_bounded
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import parse_line
from stabilitygate.measure.entailment import Judgment, PairKey

log = logging.getLogger(__name__)
SUFFIX = ".judgments.jsonl"
_SHA256_CHARS = 64


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
        key, judgment = _to_judgment(obj, shown, number)
        found[key] = judgment
    return found


def _to_judgment(obj: Any, shown: str, line: int) -> tuple[PairKey, Judgment]:
    if not isinstance(obj, dict):
        raise BadInput("expected a JSON object (one judgment a line)", path=shown, line=line)
    for name in ("judge", "premise", "hypothesis"):
        value = obj.get(name)
        if not isinstance(value, str) or not value or (name != "judge" and len(value) != _SHA256_CHARS):
            what = "a non-empty string" if name == "judge" else "the sha256 of a text (64 hex digits)"
            raise BadInput(f"`{name}` must be {what}, got {value!r:.80}", path=shown, line=line)
    try:
        judgment = Judgment.from_json(obj)
    except ValueError as exc:
        raise BadInput(str(exc), path=shown, line=line) from exc
    return PairKey(obj["judge"], obj["premise"], obj["hypothesis"]), judgment
