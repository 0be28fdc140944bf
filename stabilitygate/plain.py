"""JSON-ready values with floats rounded once, the same way everywhere (docs/design.md, "Determinism").

Reports and baselines round every float to REPORT_DECIMALS so that runs whose only difference is
float noise (embedding batch sizes, summation order) give byte-identical files.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping

from pydantic import JsonValue as JSON  # typed_json's JSON: that module builds on this one

REPORT_DECIMALS = 6
_SURROGATE = re.compile("[\ud800-\udfff]")


def round_float(value: float) -> float:
    """A report float: REPORT_DECIMALS places, never -0.0."""
    rounded = round(float(value), REPORT_DECIMALS)
    return 0.0 if rounded == 0 else rounded


def round_optional(value: float | None) -> float | None:
    """`round_float`, keeping None (a metric that could not be measured)."""
    return None if value is None else round_float(value)


def plain(value: object) -> JSON:
    """JSON-ready copy: floats rounded, NaN and infinities as null, lone surrogates replaced.

    A value JSON has no form for (a path, an object) is a TypeError: written as its `str()`, it would
    be a report key whose shape no reader or schema knows.
    """
    if isinstance(value, str):
        # A lone surrogate (from a JSON "\ud800" escape) cannot be written as UTF-8.
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):  # numpy's float64 too: it subclasses float
        if math.isnan(value) or math.isinf(value):
            return None
        return round_float(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((plain(v) for v in value), key=lambda x: json.dumps(x, sort_keys=True))
    item = getattr(value, "item", None)  # a numpy scalar, told apart without importing numpy
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == () and callable(item):
        return plain(item())
    raise TypeError(f"no JSON form for a {type(value).__name__}: {value!r:.80}")
