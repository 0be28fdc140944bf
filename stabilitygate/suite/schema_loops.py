"""A JSON Schema that applies itself to the same value without end (`{"$ref": "#"}`).

jsonschema follows such a schema until Python's stack overflows, on any value (or, for a loop under
`properties`, on any value with that property). Found here, the suite is exit 2 at the schema's line
before anything is sampled (docs/design.md §15): the loop is a cycle among the subschemas that apply
to the very value their parent applies to (`$ref` to a local pointer, `allOf`, `anyOf`, `oneOf`,
`not`, `if`, `then`, `else`, `dependentSchemas`), which consume nothing of it.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

from pydantic import JsonValue

from stabilitygate.jsonpointer import resolve_pointer

_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
#: Keywords whose subschemas apply to parts of the value (they consume structure): walked for
#: nested schemas, never edges of the loop.
_NESTED_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_NESTED_ONE = (
    "items",
    "additionalProperties",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
)
_NESTED_LISTS = ("prefixItems",)


def self_applying_loop(schema: JsonValue) -> str | None:
    """The JSON pointer of a subschema that applies itself to its own value without end, or None."""
    state: dict[str, int] = {}  # pointer -> 1 on the current path, 2 done
    for pointer in subschemas(schema, ""):
        found = _loop_from(schema, pointer, state)
        if found is not None:
            return found
    return None


def _loop_from(root: JsonValue, start: str, state: dict[str, int]) -> str | None:
    stack: list[tuple[str, Iterator[str]]] = []
    if state.get(start) == 2:
        return None
    state[start] = 1
    stack.append((start, iter(_in_place(root, start))))
    while stack:
        pointer, edges = stack[-1]
        step = next(edges, None)
        if step is None:
            state[pointer] = 2
            stack.pop()
            continue
        seen = state.get(step)
        if seen == 1:
            return step or "#"
        if seen is None:
            state[step] = 1
            stack.append((step, iter(_in_place(root, step))))
    return None


def _at(root: JsonValue, pointer: str) -> JsonValue:
    ok, value = resolve_pointer(root, pointer)
    return value if ok else None


def _in_place(root: JsonValue, pointer: str) -> Iterator[str]:
    """The pointers of the subschemas that apply to the same value as the one at `pointer`."""
    node = _at(root, pointer)
    if not isinstance(node, dict):
        return
    for key in ("$ref", "$dynamicRef"):
        ref = node.get(key)
        if isinstance(ref, str) and ref.startswith("#"):
            target = urllib.parse.unquote(ref[1:])
            if target == "" or target.startswith("/"):
                ok, _ = resolve_pointer(root, target)
                if ok:
                    yield target
    for key in _IN_PLACE_LISTS:
        if isinstance(items := node.get(key), list):
            yield from (f"{pointer}/{key}/{i}" for i in range(len(items)))
    for key in _IN_PLACE_ONE:
        if key in node:
            yield f"{pointer}/{key}"
    if isinstance(dependent := node.get("dependentSchemas"), dict):
        yield from (f"{pointer}/dependentSchemas/{_escape(name)}" for name in dependent)


def subschemas(node: JsonValue, pointer: str) -> Iterator[str]:
    """Every subschema's pointer, the root's first."""
    todo = [(node, pointer)]
    while todo:
        current, at = todo.pop()
        if not isinstance(current, dict):
            continue
        yield at
        children: list[tuple[JsonValue, str]] = []
        for key in (*_IN_PLACE_ONE, *_NESTED_ONE):
            if key in current:
                children.append((current[key], f"{at}/{key}"))
        for key in (*_IN_PLACE_LISTS, *_NESTED_LISTS):
            if isinstance(items := current.get(key), list):
                children += [(item, f"{at}/{key}/{i}") for i, item in enumerate(items)]
        for key in _NESTED_MAPS:
            if isinstance(named := current.get(key), dict):
                children += [(item, f"{at}/{key}/{_escape(name)}") for name, item in named.items()]
        todo.extend(reversed(children))


def _escape(name: str) -> str:
    return str(name).replace("~", "~0").replace("/", "~1")
