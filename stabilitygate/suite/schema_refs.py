"""The answers' JSON Schemas, checked when the suite loads for what validating them must never do
(docs/design.md §15): follow a `$ref` out of the schema (jsonschema fetched a URL with no timeout,
and a `file:` reference ended in exit 3), follow one that names nothing, or run a pattern outside the
time limit of the suite's other patterns.

Validation itself (`measure/answer_schema.py`) runs `pattern`, `patternProperties` and
`additionalProperties` on the `regex` engine under that limit; `unevaluatedProperties` beside
`patternProperties` is the one combination jsonschema would still run with `re`, so it is refused.
Each problem is exit 2 at the line of the keyword that has it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

from pydantic import JsonValue

from stabilitygate.errors import BadInput
from stabilitygate.jsonpointer import resolve_pointer
from stabilitygate.patterns import compile_pattern
from stabilitygate.suite.model import AnswerSpec, Suite
from stabilitygate.suite.schema_loops import subschemas
from stabilitygate.suite.sizes import LineOf

Place = tuple[str | int, ...]
_REFS = ("$ref", "$dynamicRef")
_ANCHORS = ("$anchor", "$dynamicAnchor")


def check_answer_schemas(suite: Suite, line_of: LineOf, path: str) -> None:
    """Every `answer.schema` of the suite (cases, variants): BadInput at the line of its first problem."""
    for where, answer in _answers(suite):
        if answer.schema_ is None:
            continue
        problem = schema_problem(answer.schema_)
        if problem is not None:
            at, message = problem
            raise BadInput(f"answer.schema: {message}", path=path, line=line_of((*where, "schema", *at)))


def schema_problem(schema: JsonValue) -> tuple[Place, str] | None:
    """(where in the schema, what is wrong) for its first problem, or None."""
    nodes = [(pointer, node) for pointer in subschemas(schema, "") if isinstance(node := _at(schema, pointer), dict)]
    anchors = {node[key] for _, node in nodes for key in _ANCHORS if isinstance(node.get(key), str)}
    # Under a nested $id, '#...' is relative to that resource: left to the validator's own lookup.
    rebased = any("$id" in node for pointer, node in nodes if pointer)
    unevaluated = next((p for p, node in nodes if "unevaluatedProperties" in node), None)
    if unevaluated is not None and any("patternProperties" in node for _, node in nodes):
        return (
            (*_place(schema, unevaluated), "unevaluatedProperties"),
            "unevaluatedProperties beside patternProperties is not supported: jsonschema would run those "
            "patterns without the time limit of the suite's patterns; use additionalProperties",
        )
    for pointer, node in nodes:
        found = _node_problem(schema, node, anchors, rebased)
        if found is not None:
            return (*_place(schema, pointer), found[0]), found[1]
    return None


def _node_problem(
    root: JsonValue, node: dict[str, JsonValue], anchors: set[JsonValue], rebased: bool
) -> tuple[str, str] | None:
    for key in _REFS:
        ref = node.get(key)
        if isinstance(ref, str):
            why = _ref_problem(root, ref, anchors, rebased)
            if why is not None:
                return key, f"{key} {ref!r:.200} {why}"
    patterns = [("pattern", node["pattern"])] if isinstance(node.get("pattern"), str) else []
    properties = node.get("patternProperties")
    patterns += [("patternProperties", key) for key in properties] if isinstance(properties, dict) else []
    for key, pattern in patterns:
        try:
            compile_pattern(str(pattern))
        except ValueError as exc:
            return key, f"the pattern {pattern!r:.80} does not compile: {exc}"
    return None


def _ref_problem(root: JsonValue, ref: str, anchors: set[JsonValue], rebased: bool) -> str | None:
    if not ref.startswith("#"):
        return (
            "points outside the schema (a URL, a file or another document), and the gate resolves references "
            "inside the schema only: copy what it names under $defs and refer to it as #/$defs/NAME"
        )
    fragment = urllib.parse.unquote(ref[1:])
    if rebased:
        return None
    if fragment == "" or fragment.startswith("/"):
        return None if resolve_pointer(root, fragment)[0] else "names nothing in the schema"
    return None if fragment in anchors else "names nothing in the schema (no $anchor of that name)"


def _answers(suite: Suite) -> Iterator[tuple[Place, AnswerSpec]]:
    for name, variant in (suite.variants or {}).items():
        if variant.answer is not None:
            yield ("variants", name, "answer"), variant.answer
    for i, case in enumerate(suite.cases):
        if case.answer is not None:
            yield ("cases", i, "answer"), case.answer
        for name, variant in (case.variants or {}).items():
            if variant.answer is not None:
                yield ("cases", i, "variants", name, "answer"), variant.answer


def _at(root: JsonValue, pointer: str) -> JsonValue:
    ok, value = resolve_pointer(root, pointer)
    return value if ok else None


def _place(root: JsonValue, pointer: str) -> Place:
    """The pointer as the path of keys and indices the suite's line index knows."""
    place: list[str | int] = []
    node = root
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            place.append(int(token))
            node = node[int(token)]
        else:
            place.append(token)
            node = node.get(token) if isinstance(node, dict) else None
    return tuple(place)
