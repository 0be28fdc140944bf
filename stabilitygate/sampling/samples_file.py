"""The samples JSONL file (docs/design.md §8): written line by line as samples arrive, read back for `score`."""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from stabilitygate.atomic import open_lines
from stabilitygate.bounded import MAX_SAMPLES_BYTES, read_bytes_bounded
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import parse_line
from stabilitygate.samples import Sample
from stabilitygate.typed_json import JSON, from_json

log = logging.getLogger(__name__)


def _finite(value: JSON) -> JSON:
    """JSON has no NaN or infinity (a -inf logprob would make the line unreadable elsewhere): null them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def sample_line(sample: Sample) -> str:
    """One sample as its compact JSON line (without the newline)."""
    return json.dumps(_finite(sample.to_json()), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class SamplesWriter:
    """Writes one JSON line per sample, flushed at once, so an interrupted run keeps every line received.

    Use as a context manager; the instance is callable, so it can be passed as `on_sample` directly.
    The file is started afresh unless `append` is true.
    """

    def __init__(self, path: str | os.PathLike[str], *, append: bool = False) -> None:
        self.path = Path(path)
        self.append = append
        self.count = 0
        self._handle: IO[str] | None = None

    def __enter__(self) -> SamplesWriter:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open_lines(self.path, append=self.append)
        except OSError as exc:
            raise BadInput(f"cannot write the samples file: {exc.strerror or exc}", path=str(self.path)) from exc
        return self

    def write(self, sample: Sample) -> None:
        if self._handle is None:
            raise RuntimeError("SamplesWriter.write outside its `with` block")
        try:
            self._handle.write(sample_line(sample) + "\n")
            self._handle.flush()
        except OSError as exc:
            raise BadInput(f"cannot write the samples file: {exc.strerror or exc}", path=str(self.path)) from exc
        self.count += 1

    __call__ = write

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_samples(path: str | os.PathLike[str], *, on_warning: Callable[[str], None] | None = None) -> list[Sample]:
    """The samples of a JSONL file, in file order; BadInput("path:LINE: ...") on any broken line.

    A last line without its newline that does not parse is what an interruption leaves behind: it
    is dropped with a warning instead of failing the whole file. A file over `MAX_SAMPLES_BYTES`
    is refused before it is read.
    """
    shown = str(path)
    try:
        data = read_bytes_bounded(path, limit=MAX_SAMPLES_BYTES, what="the samples file")
    except FileNotFoundError as exc:
        raise BadInput("no such file", path=shown) from exc
    lines = data.split(b"\n")
    cut_last = not data.endswith(b"\n") and data != b""
    samples: list[Sample] = []
    first_seen: dict[tuple[str, int], int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        is_cut = cut_last and number == len(lines)
        try:
            obj = parse_line(raw)
        except ValueError as exc:
            if is_cut:
                message = f"{shown}:{number}: dropped the last line, cut short (the run was interrupted?)"
                log.warning(message)
                if on_warning is not None:
                    on_warning(message)
                continue
            raise BadInput(str(exc), path=shown, line=number) from exc
        sample = from_json(Sample, obj, what="a sample line", source=shown, line=number)
        key = (sample.case, sample.index)
        if key in first_seen:
            raise BadInput(
                f"sample {sample.index} of case {sample.case!r} appears twice (first at line {first_seen[key]})",
                path=shown,
                line=number,
            )
        first_seen[key] = number
        samples.append(sample)
    return samples
