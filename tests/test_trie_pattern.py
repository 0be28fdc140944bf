"""`trie_pattern`: one regex for many strings, matching exactly them, the longest first."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from stabilitygate.trie_pattern import trie_pattern

FORMS = st.lists(st.text(alphabet="ab.(*", min_size=1, max_size=6), min_size=1, max_size=12, unique=True)


@given(FORMS, st.text(alphabet="ab.(*", max_size=8))
def test_it_matches_exactly_the_forms(forms: list[str], text: str) -> None:
    pattern = re.compile(trie_pattern(forms))
    assert all(pattern.fullmatch(form) for form in forms)
    assert bool(pattern.fullmatch(text)) == (text in forms)


@given(FORMS, st.text(alphabet="ab.(*", max_size=8))
def test_at_a_position_the_longest_form_there_wins(forms: list[str], text: str) -> None:
    found = re.compile(trie_pattern(forms)).match(text)
    longest = max((f for f in forms if text.startswith(f)), key=len, default=None)
    assert (found.group() if found else None) == longest


def test_shared_prefixes_are_written_once() -> None:
    assert trie_pattern(["four", "forty"]) == "fo(?:rty|ur)"
    assert trie_pattern(["a", "ab"]) == "a(?:b)?"
