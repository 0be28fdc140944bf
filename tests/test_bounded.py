"""Bounded reads: a file over its limit is refused from its size, before a byte of it is read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stabilitygate import bounded
from stabilitygate.bounded import MAX_REPORT_BYTES, MAX_SAMPLES_BYTES, MAX_SUITE_BYTES, read_bytes_bounded
from stabilitygate.cli import main
from stabilitygate.errors import BadInput

GIB = 1024**3


class CountingFile:
    """The real file, counting the bytes read from it."""

    def __init__(self, handle: Any, counts: list[int]) -> None:
        self._handle = handle
        self._counts = counts

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def fileno(self) -> int:
        return int(self._handle.fileno())

    def read(self, size: int = -1) -> bytes:
        data = self._handle.read(size)
        self._counts.append(len(data))
        return bytes(data)


@pytest.fixture
def bytes_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The sizes of every read the bounded reader makes (an empty list: it read nothing)."""
    counts: list[int] = []

    def counting_open(path: str, mode: str) -> CountingFile:
        return CountingFile(open(path, mode), counts)

    monkeypatch.setattr(bounded, "open", counting_open, raising=False)
    yield counts


def sparse(path: Path, size: int) -> Path:
    """A file of `size` bytes that takes no disk space (and no time to write)."""
    with path.open("wb") as handle:
        handle.truncate(size)
    assert path.stat().st_size == size
    return path


def test_a_file_within_its_limit_is_read_whole(tmp_path: Path, bytes_read: list[int]) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    assert read_bytes_bounded(path, limit=10, what="the file") == b"0123456789"
    assert sum(bytes_read) == 10


def test_a_file_over_its_limit_is_refused_unread(tmp_path: Path, bytes_read: list[int]) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789!")
    with pytest.raises(BadInput, match=r"f: the file is too big \(0 MiB\): this gate reads at most 0 MiB of it"):
        read_bytes_bounded(path, limit=10, what="the file")
    assert bytes_read == []


def test_a_missing_file_passes_through_and_a_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes_bounded(tmp_path / "none", limit=10, what="the file")
    with pytest.raises(BadInput, match="cannot read the file: it is a directory"):
        read_bytes_bounded(tmp_path, limit=10, what="the file")


def test_a_multi_gigabyte_report_is_exit_2_without_being_read(
    tmp_path: Path, bytes_read: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    report = sparse(tmp_path / "report.json", 8 * GIB)
    assert main(["merge", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"stabilitygate: error: {report}: the report is too big (8,192 MiB): this gate reads at most "
        f"{MAX_REPORT_BYTES // bounded.MIB} MiB of it"
    )
    assert bytes_read == []


@pytest.mark.parametrize(
    ("limit", "command", "what"),
    [(MAX_SUITE_BYTES, "validate", "the suite"), (MAX_SAMPLES_BYTES, "score", "the samples file")],
)
def test_suites_and_samples_files_over_their_limits_are_exit_2_unread(
    tmp_path: Path, bytes_read: list[int], capsys: pytest.CaptureFixture[str], limit: int, command: str, what: str
) -> None:
    big = sparse(tmp_path / "big", limit + 1)
    suite = tmp_path / "suite.yml"
    suite.write_text("version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p}]\n")
    argv = ["validate", str(big)] if command == "validate" else ["score", str(big), "--suite", str(suite)]
    assert main(argv) == 2
    assert f"{big}: {what} is too big" in capsys.readouterr().err
    assert all(size < 1024 for size in bytes_read)  # only the suite of `score`, never the big file


def test_an_oversized_baseline_is_exit_2_unread(
    tmp_path: Path, bytes_read: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text("version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p}]\n")
    sparse(tmp_path / "suite.baseline.json", bounded.MAX_BASELINE_BYTES + 1)
    samples = tmp_path / "s.jsonl"
    samples.write_text('{"case": "a", "index": 0, "text": "x"}\n{"case": "a", "index": 1, "text": "x"}\n')
    assert main(["score", str(samples), "--suite", str(suite)]) == 2
    assert "suite.baseline.json: the baseline is too big" in capsys.readouterr().err
    assert all(size < 1024 for size in bytes_read)


def test_the_limits_are_documented() -> None:
    root = Path(__file__).resolve().parents[1]
    design = (root / "docs" / "design.md").read_text()
    for name in ("MAX_SUITE_BYTES", "MAX_BASELINE_BYTES", "MAX_REPORT_BYTES", "MAX_SAMPLES_BYTES"):
        assert name in design
