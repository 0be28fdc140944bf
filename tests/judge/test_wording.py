"""How the judge words values and p-values in its sentences."""

from __future__ import annotations

import pytest

from stabilitygate.judge.wording import (
    p_corrected,
    p_corrected_and_own,
    p_number,
    p_phrase,
    same_value,
    show,
    update_hint,
)


def test_json_answers_compare_by_value() -> None:
    assert same_value({"a": 1, "b": [2]}, {"b": [2], "a": 1})
    assert same_value(3, 3.0)
    assert not same_value(True, 1)
    assert not same_value("1", 1)


def test_show_is_one_short_quoted_line() -> None:
    assert show("A") == "'A'"
    assert show("it's\nmulti   line") == "'it\\'s multi line'"
    assert show({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    long = show("x" * 500)
    assert len(long) == 82 and long.endswith("…'")


@pytest.mark.parametrize(
    ("p", "phrase", "number", "tight"),
    [
        (0.5, "p = 0.50", "0.50", "0.50"),
        (0.1, "p = 0.10", "0.10", "0.10"),
        (0.0211, "p = 0.021", "0.021", "0.021"),
        (0.001, "p = 0.001", "0.001", "0.001"),
        (0.0004, "p < 0.001", "< 0.001", "<0.001"),
    ],
)
def test_p_values_are_worded_in_one_place(p: float, phrase: str, number: str, tight: str) -> None:
    assert p_phrase(p) == phrase
    assert p_number(p) == number and p_number(p, spaced=False) == tight
    assert p_corrected(p) == f"{phrase} after correction"


def test_p_after_correction_and_on_its_own() -> None:
    assert p_corrected_and_own(0.042, 0.021) == "p = 0.042 after correction (0.021 on its own)"
    assert p_corrected_and_own(0.0008, 0.0004) == "p < 0.001 after correction (< 0.001 on its own)"


def test_the_update_hint_names_the_flag_and_in_markdown_the_action_input() -> None:
    assert update_hint() == "run with --update-baseline to record it"
    markdown = update_hint("markdown")
    assert "`--update-baseline`" in markdown and "`update-baseline: true`" in markdown and "commit" in markdown
