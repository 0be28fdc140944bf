"""How the judge writes values and p-values into its sentences, and when two answers are the same."""

from __future__ import annotations

import json
from typing import Any


def same_value(a: Any, b: Any) -> bool:
    """Answers are equal when their canonical JSON is, or when both are the same number."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return _canonical(a) == _canonical(b)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def show(value: Any, limit: int = 80) -> str:
    """An answer or completion for a sentence: one line, quoted, cut when long."""
    text = value if isinstance(value, str) else _canonical(value)
    text = " ".join(text.split()) if isinstance(value, str) else text
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "'" + text.replace("'", "\\'") + "'" if isinstance(value, str) else text


def p_phrase(p: float, *, bare: bool = False) -> str:
    if p < 0.001:
        shown = "< 0.001"
        return shown if bare else f"p {shown}"
    shown = f"{p:.2f}" if p >= 0.1 else f"{p:.2g}"
    return shown if bare else f"p = {shown}"


def format_p(p: float) -> str:
    """'p = 0.042', 'p = 0.50', 'p < 0.001' (for reports and reasons)."""
    return p_phrase(p)
