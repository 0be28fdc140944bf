"""Counting metrics: unique completions, mode share, parsed agreement, TAR, accuracy (docs/design.md §5, "The numbers").

Everything works on distinct texts with their multiplicities, so a case's cost grows with the number of
different completions, not with the number of samples.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TypeVar

from stabilitygate.measure.expected import expected_test
from stabilitygate.measure.parsers import ParsedAnswer, parse_answer
from stabilitygate.metrics import Metrics
from stabilitygate.plain import round_optional
from stabilitygate.suite.model import AnswerSpec
from stabilitygate.typed_json import JSON

T = TypeVar("T")


def value_key(value: object) -> str:
    """A total order over JSON-able values of mixed types, for stable sorting."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def count_texts(texts: Iterable[str]) -> dict[str, int]:
    """Distinct texts with their counts, in order of first appearance."""
    counts: dict[str, int] = {}
    for text in texts:
        counts[text] = counts.get(text, 0) + 1
    return counts


def ranked(counts: Mapping[T, int]) -> list[tuple[T, int]]:
    """(value, count) by count descending, then by value: the report order, and the mode first."""
    return sorted(counts.items(), key=lambda item: (-item[1], value_key(item[0])))


def raw_metrics(counts: Mapping[str, int]) -> Metrics:
    """The numbers of the completions themselves: unique completions, mode share, TARr."""
    total = sum(counts.values())
    if total == 0:
        return Metrics(unique_completions=0)
    return Metrics(
        unique_completions=len(counts),
        mode_share=round_optional(max(counts.values()) / total),
        tar_raw=len(counts) == 1,
    )


def parse_texts(spec: AnswerSpec, counts: Mapping[str, int]) -> dict[str, ParsedAnswer]:
    """Each distinct text parsed once."""
    return {text: parse_answer(spec, text) for text in counts}


def answer_counts(parsed: Mapping[str, ParsedAnswer], counts: Mapping[str, int]) -> dict[JSON, int]:
    """Parsed answers with their counts (parse failures left out), in order of first appearance."""
    answers: dict[JSON, int] = {}
    for text, n in counts.items():
        answer = parsed[text]
        if answer.ok:
            answers[answer.value] = answers.get(answer.value, 0) + n
    return answers


def parsed_metrics(spec: AnswerSpec, parsed: Mapping[str, ParsedAnswer], counts: Mapping[str, int]) -> Metrics:
    """The numbers of the parsed answers: agreement, TARa, parse failures, the share that meets the schema."""
    total = sum(counts.values())
    failures = sum(n for text, n in counts.items() if not parsed[text].ok)
    answers = answer_counts(parsed, counts)
    schema_ok = sum(n for text, n in counts.items() if parsed[text].schema_valid)
    if total == 0:
        return Metrics(parse_failures=0)
    return Metrics(
        parsed_agreement=round_optional(max(answers.values(), default=0) / total),
        tar_parsed=failures == 0 and len(answers) == 1,
        parse_failures=failures,
        schema_valid_share=round_optional(schema_ok / total) if spec.schema_ is not None else None,
    )


def accuracy_metrics(
    spec: AnswerSpec | None,
    expected: JSON,
    parsed: Mapping[str, ParsedAnswer] | None,
    counts: Mapping[str, int],
) -> Metrics:
    """Share of samples whose answer `expected` accepts; without a parser the completion is the answer."""
    total = sum(counts.values())
    if expected is None or total == 0:
        return Metrics()
    accepts = expected_test(spec if parsed is not None else None, expected)
    if spec is None or parsed is None:
        correct = sum(n for text, n in counts.items() if accepts(text))
    else:
        correct = sum(n for text, n in counts.items() if parsed[text].ok and accepts(parsed[text].value))
    return Metrics(accuracy=round_optional(correct / total), any_correct=correct > 0, all_correct=correct == total)
