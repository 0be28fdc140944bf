"""RFC 6901 JSON pointers: the one resolver of `answer.json` and the http provider's `completion_pointer`."""

from __future__ import annotations

import difflib
import re
from collections import deque

from pydantic import JsonValue

_INDEX = re.compile(r"0|[1-9][0-9]*")  # ASCII digits, no leading zero; '-' (past the end) points at nothing


def resolve_pointer(doc: JsonValue, pointer: str) -> tuple[bool, JsonValue]:
    """(True, value) when `pointer` exists in `doc`, else (False, None); ValueError for a non-pointer."""
    if pointer == "":
        return True, doc
    if not pointer.startswith("/"):
        raise ValueError(f"{pointer!r} is not a JSON pointer: it must be empty or start with '/'")
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, dict):
            if token not in doc:
                return False, None
            doc = doc[token]
        elif isinstance(doc, list):
            if not _INDEX.fullmatch(token) or int(token) >= len(doc):
                return False, None
            doc = doc[int(token)]
        else:
            return False, None
    return True, doc


#: `nearest_pointer` looks at this many of a document's pointers at most (breadth first).
MAX_POINTERS = 2000


def pointers_in(doc: JsonValue, limit: int = MAX_POINTERS) -> list[str]:
    """Every pointer that exists in `doc` but the whole document's, breadth first, at most `limit`."""
    found: list[str] = []
    todo: deque[tuple[str, JsonValue]] = deque([("", doc)])
    while todo and len(found) < limit:
        prefix, node = todo.popleft()
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            pointer = f"{prefix}/{str(key).replace('~', '~0').replace('/', '~1')}"
            found.append(pointer)
            todo.append((pointer, child))
    return found[:limit]


def nearest_pointer(doc: JsonValue, pointer: str) -> str | None:
    """The pointer of `doc` closest in spelling to `pointer` (a typo's likely intent), or None."""
    close = difflib.get_close_matches(pointer, pointers_in(doc), n=1, cutoff=0.6)
    return close[0] if close else None
