"""Test data written as JSON literals, read into the gate's types the way a file would be."""

from __future__ import annotations

from typing import Any, TypeVar

from stabilitygate.typed_json import from_json

T = TypeVar("T")


def typed(kind: type[T], data: Any) -> T:
    """`data` (a JSON-shaped literal) as `kind`, validated like the report and baseline files are."""
    return from_json(kind, data, what="test data", source=None)
