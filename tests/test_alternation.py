"""One regex for many words: it matches exactly the words, the longer of two first."""

from __future__ import annotations

import re

import pytest

from stabilitygate.alternation import trie_pattern

WORDS = ["four", "fourteen", "forty", "five", "a", "an", "and"]


def test_the_pattern_shares_prefixes() -> None:
    assert trie_pattern(["forty", "four"]) == "fo(?:rty|ur)"


@pytest.mark.parametrize("text", [*WORDS, "fort", "fourt", "fi", "", "x", "fours"])
def test_it_matches_exactly_the_words(text: str) -> None:
    assert (re.fullmatch(trie_pattern(WORDS), text) is not None) == (text in WORDS)


def test_a_word_that_contains_another_is_matched_whole() -> None:
    assert re.match(trie_pattern(WORDS), "fourteen apples").group() == "fourteen"  # type: ignore[union-attr]


def test_no_words_match_only_the_empty_text() -> None:
    assert trie_pattern([]) == ""
