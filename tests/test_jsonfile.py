"""The gate's own JSON files read strictly: long integers and deep nesting are exit 2 naming the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import MAX_JSON_DEPTH, parse_line, read_json_file, too_deep


def read(path: Path) -> object:
    return read_json_file(path, what="the report", hint="write it again", limit=1 << 20)


def test_an_integer_of_thousands_of_digits_is_named_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{\n  "a": 1,\n  "b": ' + "7" * 5000 + "\n}")
    with pytest.raises(BadInput, match=r"r\.json:3: the report holds an integer of 5,000 digits at column 8"):
        read(path)


def test_nesting_past_the_limit_is_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"cases": [{"x": ' + "[" * 200 + "]" * 200 + "}]}")
    with pytest.raises(
        BadInput, match=r"nested more than 100 deep \(at cases\[0\]\.x\[0\]\[0\]\[0\]\.\.\. \(101 levels\)\)"
    ):
        read(path)
    path.write_text("[" * 5000 + "]" * 5000)  # past the parser's own depth: its line and column
    with pytest.raises(BadInput, match=r"r\.json:1: the report is nested more than 100 deep \(at column 101\)"):
        read(path)


def test_too_deep_walks_without_recursion() -> None:
    deep: object = []
    for _ in range(50_000):
        deep = [deep]
    assert too_deep(deep) is not None and too_deep({"a": [[1]]}) is None
    assert too_deep([[[]]], limit=2) is not None and too_deep([[]], limit=MAX_JSON_DEPTH) is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff", "not UTF-8"),
        (b"{", "not valid JSON"),
        (b'{"n": ' + b"1" * 200 + b"}", "an integer of 200 digits"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"a": ' + b"[" * 150 + b"]" * 150 + b"}", "nested more than 100 deep"),
    ],
)
def test_a_bad_line_says_what_is_wrong_with_it(raw: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_line(raw)
