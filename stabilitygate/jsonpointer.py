"""RFC 6901 JSON pointers: the one resolver of `answer.json` and the http provider's `completion_pointer`."""

from __future__ import annotations

import re

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
