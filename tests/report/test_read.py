"""Reading a report.json back: bounded, parsed, validated; every problem is one BadInput line."""

from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.bounded import MAX_REPORT_BYTES
from stabilitygate.errors import BadInput
from stabilitygate.report.json_report import dump_report
from stabilitygate.report.read import read_report

GOLDEN = Path(__file__).resolve().parent / "golden"


def test_a_report_reads_back_byte_for_byte() -> None:
    path = sorted(GOLDEN.glob("*.json"))[0]
    assert dump_report(read_report(path)).encode() == path.read_bytes()


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "no such file"),
        (b"\xff\xfe", "the report is not UTF-8 text"),
        (b'{"verdict": ', "the report is not valid JSON"),
        (b"[]", "not a stabilitygate report this version can read: at the top level"),
    ],
)
def test_a_bad_report_is_one_line_naming_the_file(tmp_path: Path, content: bytes | None, words: str) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(BadInput, match=f"^{path}(:1)?: {words}"):
        read_report(path)


def test_a_report_over_its_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_REPORT_BYTES + 1)
    with pytest.raises(BadInput, match="the report is too big"):
        read_report(path)
