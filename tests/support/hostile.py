"""A document with one value made hostile: every place in turn, each of a few values (for the readers' tests)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

#: A string, a negative, a fraction, a count over the suite's limit, null, a boolean, a list, an object
#: (99: within the limit, yet more than a case's samples).
HOSTILE: tuple[Any, ...] = ("abc", -1, 7.5, 99, 10**12, None, True, [], {})


def leaves(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every scalar in the document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, (*path, i))
    else:
        yield path


def set_at(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    """A copy of `data` with `value` at `path`."""
    changed = copy.deepcopy(data)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed
