"""What a report holds of each case's texts: bounded, so that every report the gate writes is read
back by its own readers (`merge`, `comment-from`: at most `MAX_REPORT_BYTES`).

A completion may be 8 MiB (the reply limit) and a case may have thousands of distinct ones; the
samples file keeps every one whole, the report lists the most frequent `MAX_ROWS` completions and
answers of each case (the metrics count them all), each text cut to a share of `TEXT_BUDGET_CHARS`
(at most `MAX_SHOWN_CHARS`, at least `MIN_SHOWN_CHARS`) with its whole length and sha256 beside it,
the pointer into the samples file (docs/design.md §8, "Size limits").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount, ErrorCount, FingerprintCount
from stabilitygate.sampling.held_texts import whole_of

MAX_ROWS = 100
MAX_SHOWN_CHARS = 2_000
MIN_SHOWN_CHARS = 200
#: All the texts of one report together: at most 6 bytes a character once JSON-escaped, so 24 MiB.
TEXT_BUDGET_CHARS = 4 * 1024 * 1024
#: Errors and fingerprints are one line each: no pointer, just cut.
SHORT_TEXT_CHARS = 500


def text_limit(measurements: Sequence[CaseMeasurement]) -> int:
    """The characters each text of the report may keep: the budget shared by all its rows."""
    rows = sum(min(len(m.completions), MAX_ROWS) + min(len(m.answers), MAX_ROWS) for m in measurements)
    return max(MIN_SHOWN_CHARS, min(MAX_SHOWN_CHARS, TEXT_BUDGET_CHARS // max(rows, 1)))


def bounded(m: CaseMeasurement, limit: int) -> CaseMeasurement:
    """`m` as the report shows it: the top rows, each text at most `limit` characters."""
    return replace(
        m,
        completions=tuple(_completion(row, limit) for row in m.completions[:MAX_ROWS]),
        answers=tuple(_answer(row, limit) for row in m.answers[:MAX_ROWS]),
        errors=tuple(ErrorCount(_short(row.error), row.count) for row in m.errors[:MAX_ROWS]),
        fingerprints=tuple(
            FingerprintCount(_short(row.fingerprint) if row.fingerprint is not None else None, row.count)
            for row in m.fingerprints[:MAX_ROWS]
        ),
    )


def _completion(row: CompletionCount, limit: int) -> CompletionCount:
    if len(row.text) <= limit:
        return row
    # A text the run held cut (sampling/held_texts.py) points at the whole, as the samples file has it.
    chars, sha256 = whole_of(row.text) or (len(row.text), _sha256(row.text))
    return CompletionCount(row.text[:limit], row.count, chars=chars, sha256=sha256)


def _answer(row: AnswerCount, limit: int) -> AnswerCount:
    if not isinstance(row.answer, str) or len(row.answer) <= limit:
        return row
    return AnswerCount(row.answer[:limit], row.count, chars=len(row.answer), sha256=_sha256(row.answer))


def _short(text: str) -> str:
    return text if len(text) <= SHORT_TEXT_CHARS else text[: SHORT_TEXT_CHARS - 1] + "…"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
