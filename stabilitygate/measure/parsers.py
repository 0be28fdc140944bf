"""Answer parsers: the answer a completion commits to, as a canonical JSON-able value (docs/design.md §4.1).

Equal answers must compare equal whatever their surface form, so every parser returns a canonical value:
json -> the canonical JSON text of the value found, choice -> the label as written in the suite,
number -> an int or a float, or the text of an exact fraction ("2/3"), regex and text -> a string.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NoReturn

from stabilitygate.errors import BadInput
from stabilitygate.jsonpointer import nearest_pointer, resolve_pointer
from stabilitygate.measure.answer_schema import schema_error
from stabilitygate.measure.canonical import NoAnswer, canonical_json, canonical_number, scalar_text
from stabilitygate.measure.choice import choice_matcher
from stabilitygate.measure.numbers import read_number
from stabilitygate.patterns import search
from stabilitygate.suite.model import AnswerSpec, ParserKind
from stabilitygate.typed_json import JSON

#: How a json answer that found a document but nothing at the pointer starts its error: the pointer is
#: the likely fault, not the format (measure/diagnostics.py and judge/diagnosis.py read it so).
NOTHING_AT = "the JSON has nothing at"
_MAX_JSON_ATTEMPTS = 2000  # start positions tried when hunting for JSON inside prose
#: The hunt reads at most this many characters per character of the completion (plus a constant):
#: each failed start costs what the decoder read before it failed, so the work stays linear.
_JSON_HUNT_READS_PER_CHAR = 4
_JSON_HUNT_SLACK = 64 * 1024


@dataclass(frozen=True)
class ParsedAnswer:
    ok: bool
    value: JSON = None  # the canonical value; None when not ok
    error: str | None = None  # why it did not parse (or failed the schema)
    schema_valid: bool | None = None  # None when the spec has no schema


# -- json ------------------------------------------------------------------------------------------------


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_JSON_START = re.compile(r"[{\[]")


def _loads(text: str) -> tuple[bool, JSON]:
    try:
        doc, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return False, None
    return (True, doc) if end == len(text) else (False, None)


def _json_documents(text: str) -> Iterator[JSON]:
    """The whole text, then fenced blocks, then every object or array embedded in prose, in that order."""
    ok, doc = _loads(text.strip())
    if ok:
        yield doc
    for fence in _FENCE.finditer(text):
        ok, doc = _loads(fence.group(1).strip())
        if ok:
            yield doc
    pos, attempts, budget = 0, 0, _JSON_HUNT_READS_PER_CHAR * len(text) + _JSON_HUNT_SLACK
    while attempts < _MAX_JSON_ATTEMPTS and budget > 0:
        start = _JSON_START.search(text, pos)
        if start is None:
            return
        attempts += 1
        try:
            doc, end = _DECODER.raw_decode(text, start.start())
        except json.JSONDecodeError as exc:  # it read up to where it failed
            budget -= max(exc.pos - start.start(), 1)
            pos = start.start() + 1
            continue
        except (ValueError, RecursionError):  # a constant refused, or nested too deeply
            budget -= len(text) - start.start()
            pos = start.start() + 1
            continue
        budget -= end - start.start()
        yield doc
        pos = end


def check_pointer(pointer: str) -> None:
    if pointer and not pointer.startswith("/"):
        raise BadInput(f"answer.json: {pointer!r} is not a JSON pointer: it must be empty or start with '/'")


def _parse_json(spec: AnswerSpec, text: str) -> JSON:
    return _json_document_and_value(spec, text)[1]


def _json_document_and_value(spec: AnswerSpec, text: str) -> tuple[JSON, JSON]:
    """The first JSON document in `text` that has something at the pointer, and that something."""
    pointer = spec.json_ or ""
    check_pointer(pointer)
    first: list[JSON] = []
    for doc in _json_documents(text):
        first = first or [doc]
        ok, value = resolve_pointer(doc, pointer)
        if ok:
            return doc, value
    if not first:
        raise NoAnswer("no JSON document found")
    near = nearest_pointer(first[0], pointer)
    raise NoAnswer(f"{NOTHING_AT} {pointer}" + (f" (did you mean {near}?)" if near else ""))


# -- choice ----------------------------------------------------------------------------------------------


def _parse_choice(spec: AnswerSpec, text: str) -> str:
    return choice_matcher(tuple(spec.choice or ())).parse(text)


# -- regex, number, text ---------------------------------------------------------------------------------


def _parse_regex(spec: AnswerSpec, text: str) -> str:
    m = search(spec.regex or "", text, where="answer.regex")
    if m is None:
        raise NoAnswer("the pattern does not match")
    answer = m.group(1) if m.re.groups else m.group(0)
    if answer is None:
        raise NoAnswer("the pattern's first group did not take part in the match")
    if not answer:  # the same empty answer in every sample would look perfectly stable
        raise NoAnswer("the pattern matched an empty answer")
    return answer


def parse_number(text: str, *, decimal_comma: bool = False) -> int | float | str:
    """The number `text` commits to (the rules of docs/design.md §4.1, in `measure/numbers/`)."""
    return read_number(text, decimal_comma=decimal_comma)


def _parse_number(spec: AnswerSpec, text: str) -> int | float | str:
    return read_number(text, decimal_comma=spec.decimal_comma)


def normalize_text(text: str, steps: Sequence[str]) -> str:
    """Applied in a fixed order (punctuation, lower, whitespace, strip) whatever order the suite lists."""
    chosen = set(steps)
    if "punctuation" in chosen:
        text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))
    if "lower" in chosen:
        text = text.lower()
    if "whitespace" in chosen:
        text = re.sub(r"\s+", " ", text)
    if "strip" in chosen:
        text = text.strip()
    return text


def _parse_text(spec: AnswerSpec, text: str) -> str:
    value = normalize_text(text, spec.text.normalize if spec.text else [])
    if not value:
        raise NoAnswer("the answer is empty")
    return value


_PARSERS: dict[ParserKind, Callable[[AnswerSpec, str], JSON]] = {
    "json": _parse_json,
    "choice": _parse_choice,
    "regex": _parse_regex,
    "number": _parse_number,
    "text": _parse_text,
}


# -- public ----------------------------------------------------------------------------------------------


def parse_answer(spec: AnswerSpec, text: str) -> ParsedAnswer:
    """The answer `text` commits to under `spec`; a failed parse or schema check is ok=False, never raised."""
    has_schema = spec.schema_ is not None
    try:
        if spec.kind == "json":
            # The schema describes the structured output as a whole (response_format, tool
            # arguments), the pointer picks the answer out of it.
            document, raw = _json_document_and_value(spec, text)
        else:
            raw = _PARSERS[spec.kind](spec, text)
            document = raw
    except NoAnswer as exc:
        return ParsedAnswer(ok=False, error=str(exc), schema_valid=False if has_schema else None)
    if has_schema:
        error = schema_error(spec.schema_ or {}, document)
        if error is not None:
            return ParsedAnswer(ok=False, error=error, schema_valid=False)
    value = canonical_json(raw) if spec.kind == "json" else raw
    return ParsedAnswer(ok=True, value=value, schema_valid=True if has_schema else None)


def normalize_expected(spec: AnswerSpec, expected: object) -> JSON:
    """The case's `expected` in the canonical form the parser gives, so the two compare with ==."""
    kind = spec.kind
    if kind == "json":
        return canonical_json(expected)
    if kind == "number":
        if isinstance(expected, int | float) and not isinstance(expected, bool):
            try:
                return canonical_number(expected)
            except NoAnswer:
                return expected
        try:
            return parse_number(scalar_text(expected), decimal_comma=spec.decimal_comma)
        except NoAnswer:
            return scalar_text(expected)
    if kind == "choice":
        matcher = choice_matcher(tuple(spec.choice or ()))
        written = scalar_text(expected).strip()
        if written.lower() in matcher.canonical:
            return matcher.canonical[written.lower()]
        try:
            return matcher.parse(written)
        except NoAnswer:
            return written
    if kind == "text":
        return normalize_text(scalar_text(expected), spec.text.normalize if spec.text else [])
    return scalar_text(expected)
