"""What follows a stated answer without replacing it: checks, and remarks (docs/design.md §4.1).

A check ("Check: 15 + 27 = 42 ✓", "Let's verify: ...", "Sanity check: ...", a line marked ✓) runs
to the next concluding sentence or the end. A remark is a sentence that opens as an aside ("For
comparison, ...", "Fun fact: ...", "In general, ...", "Note: ..."), asks ("Need the other 2?"),
offers more ("Let me know if you'd like 2 more examples", "I can walk you through steps 2 and 3")
or supposes another situation with "would", "could" or "might" ("Working alone, Alice would need
10 hours", "if she had skipped lunch she would have $57", "... instead of 40"); a comparison runs
to the end of its clause ("15 birds, up from 9", "12, not 15", "rather than 8", "12 years old, 3
years older than her brother"), as does a part of the answer (", including 8 children"). Their
numbers are passed over while a number before them is left.
"""

from __future__ import annotations

import re

_CHECK = re.compile(
    r"(?:^|[.!?:;]\s++|\n)[\s*_#>(\[-]*+(?P<check>(?:(?:let(?:'s|’s|\s+us|\s+me)|to|we\s+can|quick|as\s+a)\s+)?"
    r"(?:double[- ]?)?(?:check(?:ing)?|verif(?:y|ying|ication)|sanity[- ]check)\b)",
    re.I,
)
_TICK = re.compile(r"[✓✔✅]")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_OPENER = re.compile(
    r"[\s*_#>(-]*+(?:(?:for\s+comparison|by\s+comparison|in\s+comparison|compared\s+(?:to|with)|for\s+reference"
    r"|for\s+context|fun\s+fact|in\s+general|generally|by\s+the\s+way|(?:as\s+a\s+)?side\s+note|note\s+that"
    r"|keep\s+in\s+mind|remember\s+that|recall\s+that|interestingly|by\s+then)\b"
    r"|(?:notes?|n\.\s?b\.?|p\.\s?s\.?|ps|bonus|tip)\s*:|n\.\s?b\.|p\.\s?s\.)",
    re.I,
)
#: An offer to go on: "If you'd like, I can walk you through steps 2 and 3", "Want me to ...?".
_OFFER = re.compile(
    r"\b(?:if\s+you(?:['’]d|\s+would)?\s+(?:like|want|prefer)|if\s+(?:that['’]s\s+|it['’]s\s+)?helpful"
    r"|if\s+(?:that|it|this)\s+helps|let\s+me\s+know|want\s+me\s+to|would\s+you\s+like|do\s+you\s+want"
    r"|should\s+i|shall\s+i|feel\s+free|(?:happy|glad)\s+to|i\s+can\s+(?:also\s+)?(?:show|explain|walk|go|break|redo"
    r"|give|help|provide|work|share|write|draw|list|make)|i\s+could\s+(?:also\s+)?(?:show|explain|walk|go|break|redo"
    r"|give|help|provide|work|share|write|draw|list|make))\b",
    re.I,
)
#: "15 birds, up from 9", "12, not 15", "instead of 40": the number compared with, to the clause's end.
_COMPARISON = re.compile(
    r"(?:,\s*(?:up|down)\s+from|,\s*not|\b(?:compared\s+(?:to|with)|versus|vs\.?|instead\s+of|rather\s+than)"
    r"|,\s*(?:including|incl\.|of\s+which|among\s+them|excluding)"
    r"|,\s*(?:[^\s,.;!?]+\s+){0,3}?(?:older|younger|more|less|fewer|taller|shorter|longer|bigger|smaller|heavier"
    r"|lighter|higher|lower|cheaper|faster|slower)\s+than)\s[^.;!?\n]*",
    re.I,
)
# Words without which no check, remark or comparison is there to find: most texts skip those looks.
_CHECK_HINT = re.compile(r"check|verif")
_REMARK_HINT = re.compile(
    r"would|could|might|compar|refer|context|fun|general|way|note|n\.b|p\.s|ps:|bonus|tip|interesting|then|keep"
    r"|remember|recall"
    r"|like|want|prefer|helpful|helps|know|should|shall|free|happy|glad|can|\?"
)
_COMPARISON_HINT = re.compile(r"from|not|compared|versus|vs|instead|rather|includ|of which|among|than")
_MODAL = re.compile(r"\b(?:would|could|might)\b", re.I)
_SCENARIO = re.compile(r"\b(?:alone|instead|otherwise|usual(?:ly)?|comparison)\b", re.I)
_IF = re.compile(r"\bif\b", re.I)
_COUNTERFACTUAL = re.compile(r"\b(?:had|were)\b", re.I)  # after "if": "if she had skipped", "if it were"


def commentary_spans(text: str, conclusions: list[int]) -> list[tuple[int, int]]:
    """The spans of checks and remarks, in text order (they may overlap)."""
    lower = text.lower()
    spans: list[tuple[int, int]] = []
    if _CHECK_HINT.search(lower):
        spans += [(m.start("check"), _check_end(m.end(), conclusions, len(text))) for m in _CHECK.finditer(text)]
    if _TICK.search(text):
        spans += [_line_around(text, m.start()) for m in _TICK.finditer(text)]
    if _REMARK_HINT.search(lower):
        spans += [(start, end) for start, end in _sentences(text) if _is_remark(text[start:end])]
    if _COMPARISON_HINT.search(lower):
        spans += [(m.start(), m.end()) for m in _COMPARISON.finditer(text)]
    return sorted(spans)


def _line_around(text: str, pos: int) -> tuple[int, int]:
    end = text.find("\n", pos)
    return text.rfind("\n", 0, pos) + 1, len(text) if end < 0 else end


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.end()))
        start = m.end()
    return [*spans, (start, len(text))]


def _check_end(start: int, conclusions: list[int], end: int) -> int:
    return next((c for c in conclusions if c > start), end)


def _is_remark(sentence: str) -> bool:
    if _OPENER.match(sentence) or _OFFER.search(sentence) or sentence.rstrip().endswith("?"):
        return True
    return _MODAL.search(sentence) is not None and (_SCENARIO.search(sentence) is not None or _supposes(sentence))


def _supposes(sentence: str) -> bool:
    """ "if ... had", "if ... were": a case that is not the one asked about (two looks, each linear)."""
    condition = _IF.search(sentence)
    return condition is not None and _COUNTERFACTUAL.search(sentence, condition.end()) is not None
