"""The suite file: model, loading with line numbers, and the published JSON Schema."""

from stabilitygate.suite.load import LoadedSuite, check_environment, load_suite, parse_suite
from stabilitygate.suite.model import ResolvedCase, Suite

__all__ = ["LoadedSuite", "ResolvedCase", "Suite", "check_environment", "load_suite", "parse_suite"]
