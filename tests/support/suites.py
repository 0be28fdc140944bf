"""A suite from text, read by the same two steps as `load_suite` reads a file (no file written)."""

from __future__ import annotations

from stabilitygate.cases import resolve
from stabilitygate.suite.load import LoadedSuite, parse_suite_file


def parse_suite(text: str, shown: str) -> LoadedSuite:
    """The suite in `text` (as if from the file `shown`), every case resolved."""
    return resolve(parse_suite_file(text, shown))
