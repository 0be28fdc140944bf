"""Code in an answer: its spans are passed over, its outputs found."""

from __future__ import annotations

import re

from stabilitygate.measure.numbers.code import code_in


def outputs(text: str) -> list[str]:
    return [m.group() for pos in code_in(text).outputs if (m := re.compile(r"[0-9]+").match(text, pos))]


def test_fenced_code_is_passed_over_and_a_fenced_number_is_an_output() -> None:
    text = "```python\nprint(6 * 8)\n```\n```\n48\n```\nDone in 2 s."
    code = code_in(text)
    assert code.spans == [(0, len("```python\nprint(6 * 8)\n```"))]
    assert outputs(text) == ["48"]


def test_outputs_after_a_fence_in_a_repl_and_after_a_phrase() -> None:
    assert outputs("```js\nconsole.log(17 * 23)\n```\n391\n\nRun with Node 18.") == ["391"]
    assert outputs("```\n>>> sum(range(11))\n55\n```") == ["55"]
    assert outputs("```\nprint(5 * 6)\n```\nOutput: 30\n") == ["30"]
    assert outputs("```\nf(20)\n```\nThis prints 210.") == ["210"]


def test_inline_code_with_a_lone_number_is_no_code() -> None:
    text = "Call `f(3)` and it returns `48`."
    assert code_in(text).spans == [(5, 11)]
    assert outputs(text) == ["48"]  # "returns" names an output where the text holds code


def test_without_code_nothing_is_passed_over_nor_an_output() -> None:
    assert code_in("Result: 64 (from 8 squared). Output: 5") == code_in("")
