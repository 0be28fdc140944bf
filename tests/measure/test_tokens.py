from __future__ import annotations

from stabilitygate.measure.tokens import divergence_token, token_spans, tokenize


def test_tokens_are_words_and_single_punctuation_marks() -> None:
    assert tokenize('Born in "Queens, New York".') == ["Born", "in", '"', "Queens", ",", "New", "York", '"', "."]
    assert token_spans("a, b") == [(0, 1), (1, 2), (3, 4)]


def test_divergence_is_the_first_token_where_not_all_agree() -> None:
    queens = "He was born in Queens, New York."
    city = "He was born in New York City."
    assert divergence_token([queens] * 992 + [city] * 8) == 5


def test_divergence_looks_at_every_text_not_only_pairs_with_the_first() -> None:
    assert divergence_token(["a b c d", "a b c d", "a b x d", "a y c d"]) == 2


def test_a_text_that_stops_early_diverges_where_it_stops() -> None:
    assert divergence_token(["one two", "one two three"]) == 3


def test_no_divergence_for_identical_texts_or_whitespace_only_differences() -> None:
    assert divergence_token(["same text"] * 5) is None
    assert divergence_token(["one"]) is None
    assert divergence_token([]) is None
    assert divergence_token(["a  b", "a b\n"]) is None


def test_divergence_at_the_first_token() -> None:
    assert divergence_token(["Yes.", "No."]) == 1
