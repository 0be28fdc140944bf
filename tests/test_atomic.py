"""One atomic-write mechanism for reports, baselines and the embedding cache."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from stabilitygate.atomic import write_atomic, write_text_atomic


def test_a_crash_before_the_rename_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    write_text_atomic(target, "old\n")

    def crash(*_: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        write_atomic(target, b"new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left behind


@pytest.mark.parametrize("durable", [True, False])
def test_mode_follows_the_umask_and_parents_are_made(tmp_path: Path, durable: bool) -> None:
    old = os.umask(0o022)
    try:
        target = tmp_path / "a" / "b" / "x.bin"
        write_atomic(target, b"\x00\x01", durable=durable)
    finally:
        os.umask(old)
    assert target.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_a_line_file_is_never_written_through_a_link(tmp_path: Path) -> None:
    """A link committed where the gate writes must not point the write elsewhere (issue 25, item 3)."""
    from stabilitygate.atomic import open_lines

    target = tmp_path / "outside.txt"
    target.write_text("precious\n")
    link = tmp_path / "samples.jsonl"
    link.symlink_to(target)
    for append in (True, False):
        with pytest.raises(OSError):
            open_lines(link, append=append)
    assert target.read_text() == "precious\n"
    with open_lines(tmp_path / "fresh.jsonl", append=True) as handle:
        handle.write("one\n")
    with open_lines(tmp_path / "fresh.jsonl", append=True) as handle:
        handle.write("two\n")
    assert (tmp_path / "fresh.jsonl").read_text() == "one\ntwo\n"
