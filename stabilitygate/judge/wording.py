"""How the judge writes values, p-values and the update hint into its sentences, and when two
answers are the same.

The report's markdown prints p-values and the update hint too: it calls `p_number` and
`update_hint` from here, so that each is worded in one place.
"""

from __future__ import annotations

import json
from typing import Literal

from stabilitygate.typed_json import JSON

#: The flag and the Action input that record a new baseline.
UPDATE_FLAG = "--update-baseline"
UPDATE_INPUT = "update-baseline: true"

HintSurface = Literal["reason", "markdown"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 case', '2 cases', '0 errors': a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def same_value(a: JSON, b: JSON) -> bool:
    """Answers are equal when their canonical JSON is, or when both are the same number."""
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return _canonical(a) == _canonical(b)


def _canonical(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def decoded(value: JSON, json_text: bool) -> JSON:
    """An answer as a reader knows it: a json parser's answer is canonical JSON text ('"bug"'), shown
    as the value it encodes (bug); any other answer as it is."""
    if json_text and isinstance(value, str):
        try:
            loaded: JSON = json.loads(value)
        except ValueError:
            return value
        return loaded
    return value


def show(value: JSON, limit: int = 80) -> str:
    """An answer or completion for a sentence: one line, quoted, cut when long."""
    text = value if isinstance(value, str) else _canonical(value)
    text = " ".join(text.split()) if isinstance(value, str) else text
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return "'" + text.replace("'", "\\'") + "'" if isinstance(value, str) else text


def p_number(p: float, *, spaced: bool = True) -> str:
    """The p-value alone: '0.042', '0.50', '< 0.001' ('<0.001' when not `spaced`, for table cells).

    Two significant digits below 0.1, two decimals above: enough to read against alpha, no more.
    """
    if p < 0.001:
        return "< 0.001" if spaced else "<0.001"
    return f"{p:.2f}" if p >= 0.1 else f"{p:.2g}"


def p_phrase(p: float) -> str:
    """'p = 0.042', 'p = 0.50', 'p < 0.001'."""
    number = p_number(p)
    return f"p {number}" if number.startswith("<") else f"p = {number}"


def p_corrected(p_adjusted: float) -> str:
    """'p = 0.042 after correction': the run's correction across its cases (docs/design.md §6)."""
    return f"{p_phrase(p_adjusted)} after correction"


def p_corrected_and_own(p_adjusted: float, p_own: float) -> str:
    """'p = 0.042 after correction (0.021 on its own)'."""
    return f"{p_corrected(p_adjusted)} ({p_number(p_own)} on its own)"


def update_hint(surface: HintSurface = "reason") -> str:
    """How to record a new baseline: in a case's reasons (plain text), or in the markdown summary,
    which the Action posts too and so names its input as well as the flag."""
    if surface == "markdown":
        return f"update the baseline with `{UPDATE_FLAG}` (Action input `{UPDATE_INPUT}`) and commit it"
    return f"run with {UPDATE_FLAG} to record it"
