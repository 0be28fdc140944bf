"""The suite file: model and reading with line numbers (resolving its cases: `stabilitygate.cases`)."""

from stabilitygate.suite.load import LoadedSuite, ParsedSuite, parse_suite_file, read_suite_text
from stabilitygate.suite.model import ResolvedCase, Suite

__all__ = ["LoadedSuite", "ParsedSuite", "ResolvedCase", "Suite", "parse_suite_file", "read_suite_text"]
