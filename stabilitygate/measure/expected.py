"""Whether an answer is the case's `expected` one (docs/design.md, "Expected answers").

A plain value is put in the canonical form its parser gives and compared with ==, so 19, 19.0 and
"19" are one number answer. A matcher, {contains: TEXT} or {regex: PATTERN}, tests answers that are
text: the `text` and `regex` parsers' answers, or the completion itself when the case has no parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from stabilitygate.measure.parsers import normalize_expected, normalize_text
from stabilitygate.patterns import search
from stabilitygate.suite.expected import TEXT_ANSWER_KINDS, ContainsExpected, expected_matcher
from stabilitygate.suite.model import AnswerSpec
from stabilitygate.typed_json import JSON

#: A test of one answer: the parsed value, or the completion when the case has no parser.
AnswerTest = Callable[[JSON], bool]


def expected_test(spec: AnswerSpec | None, expected: object) -> AnswerTest:
    """The test `expected` sets for the answers of a case parsed by `spec` (None: no parser)."""
    if isinstance(expected, dict) and (spec is None or spec.kind in TEXT_ANSWER_KINDS):
        return _matcher_test(spec, expected)
    if spec is None:
        target = (expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False)).strip()
        return lambda completion: isinstance(completion, str) and completion.strip() == target
    canonical = normalize_expected(spec, expected)
    return lambda value: bool(value == canonical)


def _matcher_test(spec: AnswerSpec | None, expected: Mapping[object, object]) -> AnswerTest:
    matcher = expected_matcher(expected)
    if isinstance(matcher, ContainsExpected):
        # The needle goes through the answer's own normalization, so {contains: Paris} finds
        # "paris" in a lowercased answer; one that normalizes to nothing matches nothing.
        steps = spec.text.normalize if spec is not None and spec.text is not None else []
        needle = normalize_text(matcher.contains, steps)
        return lambda answer: bool(needle) and isinstance(answer, str) and needle in answer
    pattern = matcher.regex
    return lambda answer: isinstance(answer, str) and search(pattern, answer, where="expected.regex") is not None
