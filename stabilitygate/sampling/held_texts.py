"""A run-wide bound on what the samples hold in memory (docs/design.md §15, "Memory").

A completion may be 8 MiB (the reply limit) and a run holds every one until it is measured: peak
memory grew about 28 MB per 8 MiB completion, with no bound. Once the completions held pass
`MAX_HELD_CHARS`, each later one longer than `CUT_AT_CHARS` is held *cut*: its first and last
`KEPT_CHARS` characters around one line that gives the whole's length and sha256. The samples file
has already received it whole (the sampler writes before it holds), so nothing is lost from the
file, and a cut keeps what every figure reads:

- exact match, distinct completions, modes and clusters compare texts: the line's sha256 keeps two
  different completions apart and two equal ones together;
- the parsed answer: a completion is cut only when its cut parses to exactly what it does whole
  (checked here, once); otherwise it is held whole;
- the embedding model reads a text's first 256 word pieces, which lie in its first `KEPT_CHARS`
  characters whenever those hold 256 words;
- the report's rows give the whole's length and sha256 (`whole_of`), as they do for a text they cut.

It is said once, in the log, when the first completion is cut.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from stabilitygate.measure.parsers import parse_answer
from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, ResolvedCase

log = logging.getLogger("stabilitygate")
#: The characters of completion text a run holds before it cuts long ones (about 256 MiB as UTF-8 text).
MAX_HELD_CHARS = 256 * 1024 * 1024
#: Each end of a cut completion kept: far more than the 256 word pieces the embedding model reads.
KEPT_CHARS = 32 * 1024
#: A completion shorter than this is never cut: the cut would save little.
CUT_AT_CHARS = 4 * KEPT_CHARS
_LINE = (
    "\n[stabilitygate: {cut:,} characters cut here to bound memory; the whole is {chars:,} characters, sha256 {sha}]\n"
)
_WHOLE = re.compile(
    r"\n\[stabilitygate: [\d,]+ characters cut here to bound memory; "
    r"the whole is ([\d,]+) characters, sha256 ([0-9a-f]{64})\]\n"
)


@dataclass
class HeldTexts:
    """What one run holds: the characters so far, and whether a cut was said."""

    limit: int = MAX_HELD_CHARS
    answers: dict[str, AnswerSpec | None] = field(default_factory=dict)  # by case id: a cut parses alike
    held: int = 0
    cut: int = 0
    # Each long text held so far, by the sha256 of its whole: a completion seen again is held as the
    # same text (whole or cut, as it was first), so equal completions stay equal, sharing one string.
    long: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, cases: Sequence[ResolvedCase], limit: int | None = None) -> HeldTexts:
        """A run's bound (one for the whole run: its stages, probe and variants share it), knowing `cases`."""
        return cls(MAX_HELD_CHARS if limit is None else limit).knowing(cases)

    def knowing(self, cases: Sequence[ResolvedCase]) -> HeldTexts:
        """This bound, knowing the answers of `cases` too (a later stage's, a variant's)."""
        self.answers.update({case.id: case.answer for case in cases})
        return self

    def hold(self, sample: Sample) -> Sample:
        """The sample as the run keeps it: itself, or its text as first held (past the bound, cut)."""
        text = sample.text
        if text is None or len(text) < CUT_AT_CHARS:
            self.held += len(text or "")
            return sample
        digest = _sha256(text)
        kept = self.long.get(digest)
        if kept is None:
            kept = self._first_hold(sample.case, text, digest)
            self.long[digest] = kept
            self.held += len(kept)
        return sample if kept is text else replace(sample, text=kept)

    def _first_hold(self, case: str, text: str, digest: str) -> str:
        if self.held + len(text) <= self.limit:
            return text
        kept = cut_text(text, digest)
        if not self._parses_alike(case, text, kept):
            return text
        self._say_once()
        self.cut += 1
        return kept

    def _parses_alike(self, case: str, whole: str, kept: str) -> bool:
        spec = self.answers.get(case)
        return spec is None or parse_answer(spec, whole) == parse_answer(spec, kept)

    def _say_once(self) -> None:
        if self.cut == 0:
            log.warning(
                "the samples hold more than %s characters of completions: from here on, each over %s characters "
                "is held cut to its first and last %s, with its whole length and sha256 (every figure is the "
                'same; the samples file keeps it whole; docs/design.md §15, "Memory")',
                f"{self.limit:,}",
                f"{CUT_AT_CHARS:,}",
                f"{KEPT_CHARS:,}",
            )


def cut_text(text: str, digest: str | None = None) -> str:
    """`text` as a run holds it past the bound: its ends around the line that names the whole."""
    line = _LINE.format(cut=len(text) - 2 * KEPT_CHARS, chars=len(text), sha=digest or _sha256(text))
    return text[:KEPT_CHARS] + line + text[-KEPT_CHARS:]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def whole_of(text: str) -> tuple[int, str] | None:
    """(length, sha256) of the whole completion a held text was cut from; None for a text held whole."""
    if len(text) <= 2 * KEPT_CHARS:
        return None
    found = _WHOLE.fullmatch(text, KEPT_CHARS, len(text) - KEPT_CHARS)
    return (int(found.group(1).replace(",", "")), found.group(2)) if found else None
