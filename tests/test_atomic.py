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
