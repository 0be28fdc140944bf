"""The choice parser: which of the suite's labels a completion commits to.

An explicit commitment ("the answer is B", "I choose (c)", "\\boxed{D}") wins, the last one if the
text changes its mind; failing that, the last line that names exactly one label. A lone lowercase
"a" before a word is the article, not label A.
"""

from __future__ import annotations

import re
from functools import lru_cache

from stabilitygate.measure.canonical import NoAnswer

_CONNECTOR = r"(?:is|was|would\s+be|will\s+be|should\s+be|must\s+be)\b"
_ANSWER_PHRASE = (
    r"(?:\b(?:answer|choice)\b\s*(?:" + _CONNECTOR + r"\s*)?[:=\-–—]?"
    r"|\b(?:option|selection)\s*(?:" + _CONNECTOR + r"|[:=])"
    r"|\bI\s+(?:choose|pick|select|go\s+with)\b|\bgo\s+with\b)"
    r"\s*(?:(?:clearly|definitely|probably|likely|therefore|thus|indeed)\s+)?"
    r"(?:(?:option|choice)\s+)?(?:(?:[*_\"'`(\[]|\\boxed\{)\s*)*"
)
_OPENERS = r"(?:(?:[*_\"'`(\[]|\\boxed\{)\s*)*"
_CLOSERS = r"(?:[*_\"'`)\]}.]\s*)*"
_ARTICLE_FOLLOWER = re.compile(r"[ \t]+[^\W\d_]")


class ChoiceMatcher:
    """Finds the label a text commits to; compiled once per label list."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.canonical: dict[str, str] = {}
        for label in labels:
            if label.strip():  # an empty label would match everywhere
                self.canonical.setdefault(label.lower(), label)
        alternatives = "|".join(re.escape(a) for a in sorted(self.canonical, key=len, reverse=True))
        label = rf"(?<!\w)({alternatives})(?!\w)"
        self.mention = re.compile(label, re.I)
        self.phrase = re.compile(_ANSWER_PHRASE + label, re.I)
        self.second = re.compile(r"\s*" + _CLOSERS + r"(?:,|/|&|\bor\b|\band\b)\s*" + _OPENERS + label, re.I)

    @staticmethod
    def _is_article(text: str, start: int, end: int) -> bool:
        """A lone lowercase "a" followed by a word is the article, unless brackets mark it as a label."""
        if text[start:end] != "a" or (start > 0 and text[start - 1] in "(["):
            return False
        return _ARTICLE_FOLLOWER.match(text, end) is not None

    def parse(self, text: str) -> str:
        commitments: list[tuple[str, ...]] = []
        for m in self.phrase.finditer(text):
            if self._is_article(text, m.start(1), m.end(1)):
                continue
            labels = [self.canonical[m.group(1).lower()]]
            second = self.second.match(text, m.end(1))
            if second and not self._is_article(text, second.start(1), second.end(1)):
                labels.append(self.canonical[second.group(1).lower()])
            commitments.append(tuple(dict.fromkeys(labels)))
        if commitments:
            last = commitments[-1]  # a restated, final answer overrides earlier ones
            if len(last) == 1:
                return last[0]
            raise NoAnswer(f"the answer names more than one label ({', '.join(last)})")
        several = False
        for line in reversed(text.splitlines()):
            named = {
                self.canonical[m.group(1).lower()]
                for m in self.mention.finditer(line)
                if not self._is_article(line, m.start(1), m.end(1))
            }
            if len(named) == 1:
                return named.pop()
            several = several or len(named) > 1
        if several:
            raise NoAnswer("a tie: every line that names a label names more than one")
        raise NoAnswer("no label found")


@lru_cache(maxsize=256)
def choice_matcher(labels: tuple[str, ...]) -> ChoiceMatcher:
    """The matcher for this label list, compiled once."""
    return ChoiceMatcher(labels)
