"""`expected` in a case: the matchers a mapping spells, and the shapes each parser can compare with.

These are the load-time checks of docs/design.md, "Expected answers"; `measure.expected` tests the
answers of a run against the value once it has loaded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import Field, JsonValue

from stabilitygate.patterns import compile_pattern
from stabilitygate.suite.strict import Strict

#: Parsers whose answer is a string, so that `expected` may be a matcher instead of a value
#: (as may a case without a parser, whose answer is the completion itself).
TEXT_ANSWER_KINDS = frozenset({"text", "regex"})


class ContainsExpected(Strict):
    """`expected: {contains: TEXT}`: correct when the answer holds TEXT, normalized as the answer is."""

    contains: str = Field(min_length=1, description="Text the answer must contain (after the text normalization)")


class RegexExpected(Strict):
    """`expected: {regex: PATTERN}`: correct when PATTERN matches somewhere in the answer."""

    regex: str = Field(min_length=1, description="Python regular expression searched in the answer")


ExpectedMatcher = ContainsExpected | RegexExpected
_MATCHER_SHAPES = "{contains: TEXT} or {regex: PATTERN}"


def expected_matcher(value: Mapping[object, object]) -> ExpectedMatcher:
    """The matcher a mapping spells; ValueError, saying what is allowed, for anything else."""
    keys = sorted(str(k) for k in value)
    if keys not in (["contains"], ["regex"]):
        raise ValueError(f"a mapping must be {_MATCHER_SHAPES}, got the keys {', '.join(keys) or 'none'}")
    key, given = keys[0], next(iter(value.values()))
    if isinstance(given, bool) or not isinstance(given, str | int | float) or str(given) == "":
        raise ValueError(f"`{key}` takes a non-empty string, got {given!r}")
    if key == "contains":
        return ContainsExpected(contains=str(given))
    try:
        compile_pattern(str(given))
    except ValueError as exc:
        raise ValueError(f"`regex` does not compile: {exc}") from exc
    return RegexExpected(regex=str(given))


def check_expected(kind: str | None, value: object) -> None:
    """`expected` has a shape a parser of `kind` (None: no parser) can compare with; ValueError saying why not."""
    if value is None or kind == "json":  # a json answer's expected value may be any JSON value
        return
    if isinstance(value, dict):
        if kind is not None and kind not in TEXT_ANSWER_KINDS:
            raise ValueError(f"a {kind} answer compares with a plain value; {_MATCHER_SHAPES} needs a text answer")
        expected_matcher(value)
    elif isinstance(value, list):
        raise ValueError("a list compares only with a json answer (answer: {json: POINTER})")
    elif kind == "number" and not _is_number_like(value):
        raise ValueError("a number answer needs a number (19, 2.5) or a string holding one ('1,234.50')")


#: How an expected label may be written: "B", "b", "(B)", "B)", "[B]", "B.", "Option B".
_WRITTEN_LABEL = re.compile(r"^(?:option\s+)?[(\[]?(.+?)[)\].]?$", re.IGNORECASE)


def check_choice_expected(labels: list[str], value: object) -> None:
    """A `choice` case's expected answer names one of its labels; ValueError listing them."""
    if value is None or isinstance(value, dict | list):
        return
    written = str(value).strip()
    found = _WRITTEN_LABEL.match(written)
    named = {label.lower() for label in labels}
    if written.lower() not in named and (found is None or found.group(1).lower() not in named):
        raise ValueError(f"expected one of the choice labels {', '.join(labels)}")


def _is_number_like(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value == value and value not in (float("inf"), float("-inf"))
    return isinstance(value, str) and re.search(r"[0-9]", value) is not None


#: `expected` in the published JSON Schema: a plain value, a matcher, or (json answers) any JSON value.
EXPECTED_JSON_SCHEMA: dict[str, JsonValue] = {
    "anyOf": [
        {"type": ["string", "number", "boolean", "null"]},
        ContainsExpected.model_json_schema(),
        RegexExpected.model_json_schema(),
        {"type": ["object", "array"], "description": "With a json answer: the expected JSON value"},
    ]
}
