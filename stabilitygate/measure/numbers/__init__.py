"""The number reader behind `number:` (docs/design.md §4.1): the one number a text commits to, or why none.

`scan.py` reads a text's numbers (`tokens.py`, `numerals.py`, `words.py`, `notation.py`, `marks.py`,
`links.py`, `chains.py`); `reader.py` applies the rules, with `runon.py`, `structured.py`,
`refusals.py`, `explicit.py`, `context.py`, `code.py`, `commentary.py` and `alternatives.py`.
"""

from stabilitygate.measure.numbers.reader import read_number

__all__ = ["read_number"]
