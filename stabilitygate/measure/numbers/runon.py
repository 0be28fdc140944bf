"""Where an answer ends: a base model runs on past it into the next question (docs/design.md §4.1).

Cut at an end-of-text token (`<|endoftext|>`, `<|im_end|>`, `</s>`...), after GSM8K's first
`#### N` line, and at a line that opens a new question (`Question:`, `Q:`, `Problem 2:`...) once an
answer has been given before it.
"""

from __future__ import annotations

import re

_END_OF_TEXT = re.compile(r"<\|endoftext\|>|<\|im_end\|>|<\|eot_id\|>|<\|end\|>|</s>")
_DIGIT = re.compile(r"[0-9]")
_NEW_QUESTION = re.compile(
    r"\n[ \t]*(?:#+[ \t]*|\*\*)?(?:q(?:uestion)?|problem|exercise|human|user)[ \t]*[0-9]*[ \t]*(?:[:.)]|\*\*)", re.I
)


def answer_part(text: str, answer_given: re.Pattern[str]) -> str:
    """The text up to where the answer ends; `answer_given` finds an answer phrase."""
    end = _END_OF_TEXT.search(text) if "<" in text else None
    if end is not None:
        text = text[: end.start()]
    text = text[: _after_marker_line(text)]
    if "\n" not in text:  # a new question begins on a line of its own
        return text
    answer = answer_given.search(text)
    if answer is not None:
        question = _NEW_QUESTION.search(text, answer.end())
        if question is not None:
            return text[: question.start()]
    return text


def _after_marker_line(text: str) -> int:
    """The end of the first line with `####` and a digit after it; the text's end when there is none."""
    pos = text.find("####")
    while pos >= 0:
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        if _DIGIT.search(text, pos, line_end):
            return line_end
        pos = text.find("####", line_end)
    return len(text)
