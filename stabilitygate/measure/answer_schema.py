"""An answer's JSON Schema, validated with its patterns under the suite's time limit and its `$ref`s
resolved inside the schema only (docs/design.md §15).

jsonschema runs `pattern`, `patternProperties` (and, through it, `additionalProperties`) with Python's
`re`, which no clock bounds: `^(a|aa)+$` against a 41-character answer ran past 60 s. Those keywords
are replaced here by the same ones run on the `regex` engine with the limit of `answer: {regex: ...}`
(`stabilitygate.patterns`); the one place jsonschema still runs a pattern itself,
`unevaluatedProperties` beside `patternProperties`, is refused when the suite loads
(`suite/schema_refs.py`). Its registry retrieves nothing: a reference that leaves the schema (a URL,
`file:`) is refused at load too, and one that slips past is exit 2 here, never a fetch.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry
from referencing.exceptions import Unresolvable

from stabilitygate.errors import BadInput
from stabilitygate.patterns import search
from stabilitygate.typed_json import JSON

_WHERE = "answer.schema"
_MESSAGE_CHARS = 200


def schema_error(schema: Mapping[str, JSON], value: JSON) -> str | None:
    """Why `value` fails `schema` (one line), or None when it meets it; BadInput for a pattern that runs
    past the limit, a schema that refers to itself without end or a reference that names nothing."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    try:
        error = best_match(validator.iter_errors(value))
    except RecursionError as exc:  # a loop the suite's check did not see (docs/design.md §15)
        raise BadInput(
            f"{_WHERE}: validating a parsed answer recursed without end: the schema refers to itself"
        ) from exc
    except Unresolvable as exc:
        raise BadInput(f"{_WHERE}: a $ref names nothing inside the schema ({exc!s:.200})") from exc
    if error is None:
        return None
    where = "".join(f"/{p}" for p in error.absolute_path) or "the top level"
    message = error.message if len(error.message) <= _MESSAGE_CHARS else error.message[: _MESSAGE_CHARS - 3] + "..."
    return f"fails the schema at {where}: {message}"


#: A registry of no resource whose retrieval fails: a reference resolves inside the schema or not at all
#: (jsonschema's default would fetch a URL, with no timeout).
_REGISTRY: Registry[Any] = Registry()


def _pattern(
    validator: Draft202012Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and search(pattern, instance, where=f"{_WHERE} pattern") is None:
        yield ValidationError(f"{instance!r:.80} does not match {pattern!r}")


def _pattern_properties(
    validator: Draft202012Validator, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key, where=f"{_WHERE} patternProperties") is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Draft202012Validator, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras = [key for key in instance if not _named(key, schema)]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif not additional and extras:
        listed = ", ".join(repr(key) for key in sorted(extras, key=str)[:5])
        yield ValidationError(f"additional properties are not allowed ({listed} unexpected)")


def _named(key: str, schema: Mapping[str, Any]) -> bool:
    """Whether `properties` or `patternProperties` of `schema` speak for the key."""
    if key in schema.get("properties", {}):
        return True
    patterns = schema.get("patternProperties", {})
    return any(search(p, key, where=f"{_WHERE} patternProperties") is not None for p in patterns)


# jsonschema's own way to replace keywords (subclassing a validator is deprecated); it is untyped.
_TimedPatterns: type[Draft202012Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    return _TimedPatterns(json.loads(schema_json), registry=_REGISTRY)
