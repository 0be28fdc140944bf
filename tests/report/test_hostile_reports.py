"""Every value of a report replaced by a hostile one: refused as bad input, or rendered without a crash.

A report handed to `merge` or `comment-from` is input (a fork writes every byte of it). Whatever one
value is changed to, reading it either raises BadInput (exit 2, one line naming the place), or gives
a Report that every renderer renders: never a crash (exit 3) in the Markdown, the JUnit XML or the log.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.report.console import summary_lines
from stabilitygate.report.junit import render_junit
from stabilitygate.report.markdown import render_markdown
from stabilitygate.report.model import Report

GOLDEN = Path(__file__).parent / "golden" / "now.report.json"
HOSTILE: tuple[Any, ...] = ("abc", -1, 7.5, 10**12, None, True, [], {})


def leaves(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every scalar in the document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, (*path, i))
    else:
        yield path


def replaced(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


def render_everything(report: Report) -> None:
    assert render_markdown(report)
    assert render_junit(report)
    assert summary_lines(report)


def test_the_golden_report_reads_and_renders() -> None:
    render_everything(Report.from_dict(json.loads(GOLDEN.read_text(encoding="utf-8")), source="r.json"))


@pytest.mark.parametrize("hostile", HOSTILE, ids=repr)
def test_any_value_made_hostile_is_bad_input_or_renders(hostile: Any) -> None:
    document = json.loads(GOLDEN.read_text(encoding="utf-8"))
    refused = 0
    for path in leaves(document):
        try:
            report = Report.from_dict(replaced(document, path, hostile), source="r.json")
        except BadInput as exc:
            refused += 1
            assert str(exc).startswith("r.json: not a stabilitygate report this version can read: at ")
            assert "\n" not in str(exc)
            continue
        render_everything(report)
    assert refused > 0  # the reader refuses what the renderers could not format
