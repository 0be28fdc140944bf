"""The scripted OpenAI server, also answering entailment questions by a rule the test writes.

A request whose last user message is the entailment prompt (`measure/entailment.py`) is answered by
`rule(premise, hypothesis)`, a reply text; every other request is served from the script as by
`ScriptedOpenAI`. The default rule: two answers mean the same when they name the same meaning tag,
the text after the last "#" ("The shop shuts at 9 #close9" and "Closes at 9 pm #close9").

    with EntailmentServer({"Q?": [("a #x", 5), ("b #y", 5)]}) as server:
        server.judged   # [(premise, hypothesis), ...] in the order they were asked
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from tests.support.openai_server import ScriptedOpenAI, last_user_message

# The two answers between the markers the prompt declares (answer-1-TAG, answer-2-TAG).
_QUESTION = re.compile(
    r"Possible Answer 1:\n<(answer-1-\w+)>\n(.*)\n</\1>\nPossible Answer 2:\n<(answer-2-\w+)>\n(.*)\n</\3>\n"
    r"Does Possible Answer 1",
    re.S,
)
_UNMARKED = re.compile(r"Possible Answer 1: (.*)\nPossible Answer 2: (.*)\nDoes Possible Answer 1", re.S)
Rule = Callable[[str, str], str]


def tag(text: str) -> str:
    return text.rsplit("#", 1)[-1].strip()


def same_tag(premise: str, hypothesis: str) -> str:
    """entailment when both carry the same tag, else contradiction."""
    return "entailment" if tag(premise) == tag(hypothesis) else "contradiction"


def pair_of(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """(premise, hypothesis) of an entailment question; None for any other request."""
    text = last_user_message(body) or ""
    match = _QUESTION.search(text)
    if match:
        return match.group(2), match.group(4)
    before = _UNMARKED.search(text)  # the prompt before the markers (version 1)
    return (before.group(1), before.group(2)) if before else None


class EntailmentServer(ScriptedOpenAI):
    def __init__(self, *args: Any, rule: Rule = same_tag, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rule = rule
        self._judged: list[tuple[str, str]] = []
        self._judged_lock = threading.Lock()

    @property
    def judged(self) -> list[tuple[str, str]]:
        with self._judged_lock:
            return list(self._judged)

    def _next_text(self, body: Mapping[str, Any]) -> str:
        pair = pair_of(body)
        if pair is None:
            return super()._next_text(body)
        with self._judged_lock:
            self._judged.append(pair)
        return self.rule(*pair)
