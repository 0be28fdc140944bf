"""The one edge between the gate's typed payload and JSON: the value types, writing, reading, schemas.

The report and the baseline are frozen dataclasses whose fields are the JSON's keys
(docs/design.md §8, "Files"). `to_json` writes one (floats rounded once, by `stabilitygate.plain`);
`from_json` reads one back with pydantic, so a hostile value is one line naming its place (exit 2);
`json_schema` is the published JSON Schema of the same type. Nothing else turns payload into dicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Final, TypeAlias, TypeVar, overload

from pydantic import Field, JsonValue, TypeAdapter, ValidationError, WithJsonSchema
from pydantic_core import ErrorDetails

from stabilitygate.errors import BadInput
from stabilitygate.plain import plain

__all__ = [
    "JSON",
    "SCHEMA_VERSION",
    "Count",
    "Finite",
    "Flag",
    "Integer",
    "JSONObject",
    "Number",
    "SchemaVersion",
    "Share",
    "Signed",
    "fields_of",
    "from_json",
    "json_schema",
    "not_written",
    "omitted_when_default",
    "to_json",
]

T = TypeVar("T")

#: A JSON value, recursively (str, number, bool, null, lists and objects of them).
JSON: TypeAlias = JsonValue
#: A JSON object as a suite writes one (params, a schema): any keys, each value JSON.
JSONObject: TypeAlias = Annotated[dict[str, JSON], WithJsonSchema({"type": "object", "additionalProperties": True})]

#: The numbers of the payload, typed so that a report or baseline with a count of -1 or a share of
#: "abc" is refused when it is read, not formatted into a crash.
#: Strict: a string that looks like a number ("0.01") or a boolean is refused, as a JSON Schema
#: refuses it; an integer is still a float.
Count = Annotated[int, Field(ge=0, strict=True)]
Share = Annotated[float, Field(ge=0, le=1, strict=True)]
Signed = Annotated[float, Field(ge=-1, le=1, strict=True)]  # a cosine, a drop, a difference of shares
Number = Annotated[float, Field(strict=True)]
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]  # a number a JSONL line may hold
Integer = Annotated[int, Field(strict=True)]
Flag = Annotated[bool, Field(strict=True)]

#: The version of the gate's JSON files (the report and the baseline), and the one this reader knows
#: (strict: `true` is not 2); `older_versions` maps a version-1 file's renamed keys onto it.
SCHEMA_VERSION: Final = 2
SchemaVersion = Annotated[int, Field(ge=SCHEMA_VERSION, le=SCHEMA_VERSION, strict=True)]

_OMIT = "stabilitygate.omit_when_default"
_HIDDEN = "stabilitygate.not_written"
_MESSAGE_LIMIT = 200


@overload
def omitted_when_default() -> None: ...
@overload
def omitted_when_default(default: T) -> T: ...
def omitted_when_default(default: object = None) -> object:
    """A field left out of the JSON while it holds its default (a key only some runs have)."""
    return dataclasses.field(default=default, metadata={_OMIT: True})


@overload
def not_written() -> None: ...
@overload
def not_written(default: T) -> T: ...
def not_written(default: object = None) -> object:
    """A field for the log and the job summary only: never in the JSON, so its type is wrapped in
    `SkipJsonSchema` to keep it out of the published schema too."""
    return dataclasses.field(default=default, compare=False, metadata={_HIDDEN: True})


def fields_of(value: object, kind: type | None = None) -> dict[str, Any]:
    """The fields of the dataclass `value` by name (those of `kind`, one of its bases, when given), to
    build a shape that extends another without naming its fields again:
    `CaseResult(**fields_of(measurement), verdict=...)`, `CaseMeasurement(**fields_of(result, CaseMeasurement))`."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        raise TypeError(f"not a dataclass instance: {type(value).__name__}")
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(kind or value) if f.init}


def to_json(value: object) -> JSON:
    """`value` as JSON: dataclasses by their fields, tuples as lists, floats rounded, NaN as null."""
    if value is None or isinstance(value, str | int | float):  # the leaves first: most values are
        leaf: JSON = plain(value)
        return leaf
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        written: dict[str, JSON] = {}
        for name, omitted, default in _written_fields(type(value)):
            field_value = getattr(value, name)
            if not (omitted and field_value == default):
                written[name] = to_json(field_value)
        return written
    if isinstance(value, Mapping):  # sorted: the JSON never depends on the order things arrived in
        return {str(k): to_json(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    result: JSON = plain(value)
    return result


@cache
def _written_fields(kind: type) -> tuple[tuple[str, bool, object], ...]:
    """The fields of a dataclass that reach the JSON: (name, left out at its default, the default)."""
    return tuple(
        (f.name, bool(f.metadata.get(_OMIT)), f.default)
        for f in dataclasses.fields(kind)
        if not f.metadata.get(_HIDDEN)
    )


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def _adapter(kind: object) -> TypeAdapter[Any]:
    """Building an adapter takes milliseconds: one per type, kept."""
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    return _ADAPTERS[kind]


def from_json(kind: type[T], data: object, *, what: str, source: str | None, line: int | None = None) -> T:
    """`data` read as `kind`; BadInput naming `source` (and `line`, in a JSONL file) and the first bad
    place when it is not one."""
    try:
        result: T = _adapter(kind).validate_python(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = "/".join(_place(data, error)) or "the top level"
        message = error["msg"] if len(error["msg"]) <= _MESSAGE_LIMIT else error["msg"][: _MESSAGE_LIMIT - 1] + "…"
        raise BadInput(f"not {what} this version can read: at {where}: {message}", path=source, line=line) from exc
    return result


def _place(data: object, error: ErrorDetails) -> list[str]:
    """The keys and indexes of the error's location that are places in `data`: pydantic also puts
    there the union member it tried ("compared", "float"), which is not where the value is."""
    path, node = [], data
    for part in error["loc"]:
        if _holds(node, part):  # else a union member's name
            node = node[part]  # type: ignore[index]
            path.append(str(part))
    if error["type"] == "missing":
        path.append(str(error["loc"][-1]))
    return path


def _holds(node: object, part: int | str) -> bool:
    if isinstance(node, Mapping):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def json_schema(kind: type, *, title: str) -> dict[str, JSON]:
    """The JSON Schema (draft 2020-12) of what `from_json(kind, ...)` accepts."""
    schema = _adapter(kind).json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, **schema}
