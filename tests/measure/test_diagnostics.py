from __future__ import annotations

import pytest

from stabilitygate.measure.diagnostics import (
    NearTie,
    near_tie,
    near_tie_diagnostics,
    split_tie,
    suggestion,
    tie_sentence,
)
from stabilitygate.results import Diagnostics
from stabilitygate.samples import TokenLogprob
from stabilitygate.typed_json import to_json


def tokens(*entries: tuple[object, ...]) -> tuple[TokenLogprob, ...]:
    """Provider tokens written as (token, logprob, runner_up, runner_up_logprob), the last two optional."""
    return tuple(TokenLogprob(*entry) for entry in entries)  # type: ignore[arg-type]


# "He was born in Queens" as provider tokens, with a near-tie at " Queens" (runner-up " New")
TEXT = "He was born in Queens"
LOGPROBS = tokens(
    ("He", -0.01, "She", -5.0),
    (" was", -0.02, " is", -4.0),
    (" born", -0.01, " raised", -3.5),
    (" in", -0.05, " at", -6.0),
    (" Queens", -0.70, " New", -0.72),
)


def test_near_tie_is_the_smallest_top_two_margin() -> None:
    tie = near_tie(LOGPROBS, TEXT, divergence=5)
    assert tie == NearTie(margin=0.02, position=5, token=" Queens", runner_up=" New", divergence_at_tie=True)


def test_divergence_right_after_the_near_tie_counts_but_further_away_does_not() -> None:
    text = "It is Queens , NY"
    logprobs = tokens(
        ("It", -0.1, "This", -2.0),
        (" is", -0.3, " was", -0.31),
        (" Queens", -0.1, " New", -3.0),
        (" ,", -0.1, ".", -2.0),
        (" NY", -0.1, " USA", -1.0),
    )
    assert near_tie(logprobs, text, divergence=2).divergence_at_tie is True  # at
    assert near_tie(logprobs, text, divergence=3).divergence_at_tie is True  # right after
    assert near_tie(logprobs, text, divergence=4).divergence_at_tie is False
    assert near_tie(logprobs, text, divergence=1).divergence_at_tie is False
    assert near_tie(logprobs, text, divergence=None).divergence_at_tie is None


def test_a_provider_token_covering_several_words_covers_them_all() -> None:
    text = "New York, USA"
    logprobs = tokens(("New York", -0.1, "Queens", -0.15), (",", -0.1, ".", -3.0), (" USA", -0.1, " US", -2.0))
    tie = near_tie(logprobs, text, divergence=3)  # words: New(1) York(2) ,(3): right after the tie's last word
    assert tie is not None and tie.position == 1 and tie.divergence_at_tie is True


def test_whitespace_only_token_points_at_the_next_word() -> None:
    text = "Yes\nNo"
    logprobs = tokens(("Yes", -0.1, "No", -3.0), ("\n", -0.2, ".", -0.25), ("No", -0.1, "Yes", -2.0))
    assert near_tie(logprobs, text, divergence=2).divergence_at_tie is True
    assert near_tie(logprobs, text, divergence=3).divergence_at_tie is False


def test_tokens_that_do_not_spell_the_text_leave_the_position_question_open() -> None:
    tie = near_tie(LOGPROBS, "something else", divergence=5)
    assert tie is not None and tie.margin == 0.02 and tie.divergence_at_tie is None


def test_entries_without_a_runner_up_are_skipped_and_none_without_any() -> None:
    logprobs = tokens(("A", -0.1, None, None), ("B", -0.5, "C", -0.9), ("D", -0.1))
    tie = near_tie(logprobs, "ABD", divergence=None)
    assert tie is not None and (tie.position, tie.margin, tie.runner_up) == (2, 0.4, "C")
    assert near_tie(tokens(("A", -0.1, None, None)), "A", divergence=None) is None
    assert near_tie((), "", divergence=None) is None


def test_equal_margins_pick_the_first_token() -> None:
    logprobs = tokens(("a", -0.5, "b", -0.6), ("c", -0.5, "d", -0.6))
    assert near_tie(logprobs, "ac", divergence=None).position == 1


def test_near_tie_report_keys() -> None:
    assert near_tie_diagnostics(None) == Diagnostics()
    assert to_json(near_tie_diagnostics(NearTie(0.02, 5, " Queens", " New", True))) == {
        "min_margin": 0.02,
        "min_margin_position": 5,
        "min_margin_token": " Queens",
        "min_margin_runner_up": " New",
        "divergence_at_min_margin": True,
    }


def advice(**overrides: object) -> str | None:
    args: dict[str, object] = {
        "samples_ok": 10,
        "unique_completions": 1,
        "parser": "choice",
        "answers": [("A", 10)],
        "parse_failures": 0,
        "first_parse_error": None,
        "tie": None,
    }
    args.update(overrides)
    return suggestion(**args)  # type: ignore[arg-type]


def test_form_only_variation_suggests_constraining_the_output() -> None:
    text = advice(unique_completions=3)
    assert text is not None and "form only" in text and "enum of the labels" in text
    json_text = advice(unique_completions=2, parser="json", answers=[('"Queens"', 10)])
    assert json_text is not None and "JSON schema" in json_text


def test_varying_answers_say_so_and_name_the_near_tie() -> None:
    tie = NearTie(0.02, 5, " Queens", " New", True)
    text = advice(unique_completions=2, answers=[("A", 8), ("B", 2)], tie=tie)
    assert text is not None
    assert text.startswith("The answer itself varies: 2 different answers, the most frequent in 8 of 10 samples.")
    assert "token 5 (' Queens' over ' New', logprob margin 0.02)" in text


def test_parse_failures_suggest_an_explicit_format() -> None:
    text = advice(answers=[("A", 7)], parse_failures=3, first_parse_error="no label found", unique_completions=2)
    assert text is not None and text.startswith("3 of 10 answers did not parse (no label found)")


def test_a_pointer_that_misses_points_at_the_pointer_not_the_format() -> None:
    error = "the JSON has nothing at /catgory (did you mean /category?)"
    text = advice(parser="json", answers=[], parse_failures=10, first_parse_error=error, unique_completions=2)
    assert text == f"10 of 10 answers did not parse ({error}): check the pointer of answer.json."
    assert "structured output" not in (text or "")


@pytest.mark.parametrize("parser", ["choice", "json", "number", "regex", "text"])
def test_the_suggestion_follows_the_kind_of_answer(parser: str) -> None:
    failing = advice(parser=parser, parse_failures=3, answers=[("A", 7)], unique_completions=2) or ""
    assert ("enum" in failing) == (parser == "choice") and ("schema" in failing) == (parser == "json")
    form = advice(parser=parser, unique_completions=3)
    assert form is None if parser == "text" else form is not None and "form only" in form  # text: normalised away
    assert ("enum" in (form or "")) == (parser == "choice")


def test_nothing_to_suggest() -> None:
    assert advice() is None  # stable in answer and in form
    assert advice(parser=None, unique_completions=4) is None
    assert advice(samples_ok=1) is None


# The run: the closest call of the modal completion was token 13, but the texts split at token 9.
SPLIT_TEXT = "The borough where he was born is Queens , in New York City"
SPLIT_LOGPROBS = tokens(
    *(
        (token, -0.1, token.upper() if i != 9 else " Brooklyn", -0.1 - (0.05 if i == 13 else 0.4 if i == 9 else 3.0))
        for i, token in enumerate(
            [
                "The",
                " borough",
                " where",
                " he",
                " was",
                " born",
                " is",
                " Queens",
                " ,",
                " in",
                " New",
                " York",
                " City",
            ],
            start=1,
        )
    )
)


def test_the_split_is_the_token_where_the_texts_part_ways_not_the_closest_call() -> None:
    # Word tokens of the text: The(1) borough(2) where(3) he(4) was(5) born(6) is(7) Queens(8) ,(9) ...
    tie = near_tie(SPLIT_LOGPROBS, SPLIT_TEXT, divergence=9)
    split = split_tie(SPLIT_LOGPROBS, SPLIT_TEXT, divergence=9)
    assert tie is not None and tie.position == 13 and tie.divergence_at_tie is False
    assert split == NearTie(margin=0.4, position=9, token=" ,", runner_up=" Brooklyn", divergence_at_tie=True)
    assert tie_sentence(tie, split, 9) == (
        "The texts split at token 9: ' ,' over ' Brooklyn', logprob margin 0.4; the closest call elsewhere is "
        "token 13 (' City' over ' CITY', logprob margin 0.05)."
    )
    assert to_json(near_tie_diagnostics(tie, split)) == {
        "min_margin": 0.05,
        "min_margin_position": 13,
        "min_margin_token": " City",
        "min_margin_runner_up": " CITY",
        "divergence_at_min_margin": False,
        "split_position": 9,
        "split_token": " ,",
        "split_runner_up": " Brooklyn",
        "split_margin": 0.4,
    }


def test_where_the_split_cannot_be_told_the_sentence_says_so() -> None:
    tie = near_tie(SPLIT_LOGPROBS, "other text", divergence=9)
    assert split_tie(SPLIT_LOGPROBS, "other text", divergence=9) is None
    assert tie_sentence(tie, None, 9) == (
        "The modal completion's closest call is token 13 (' City' over ' CITY', logprob margin 0.05); whether "
        "the texts split there (token 9) cannot be told from the provider's tokens."
    )
    at_tie = near_tie(LOGPROBS, TEXT, divergence=5)
    assert tie_sentence(at_tie, None, 5) == (
        "The modal completion's closest call is token 5 (' Queens' over ' New', logprob margin 0.02), "
        "where the texts split."
    )
    assert tie_sentence(near_tie(LOGPROBS, TEXT, divergence=2), None, 2).endswith(
        "not where the texts split (token 2)."
    )
    assert tie_sentence(None, None, 3) is None


def test_no_split_without_a_divergence_past_the_text_or_without_a_runner_up() -> None:
    assert split_tie(LOGPROBS, TEXT, divergence=None) is None
    assert split_tie(LOGPROBS, TEXT, divergence=6) is None  # the others go on after the modal text ends
    assert split_tie(tokens(("He", -0.1, None, None), (" was", -0.1, " is", -2.0)), "He was", divergence=1) is None
    assert split_tie(tokens(("He was", -0.1, "She", -0.3)), "He was", divergence=2).position == 1


def test_the_suggestion_points_at_the_split() -> None:
    tie = near_tie(SPLIT_LOGPROBS, SPLIT_TEXT, divergence=9)
    split = split_tie(SPLIT_LOGPROBS, SPLIT_TEXT, divergence=9)
    text = suggestion(
        samples_ok=10, unique_completions=2, parser="json", answers=[("Queens", 6), ("Brooklyn", 4)],
        parse_failures=0, first_parse_error=None, tie=tie, split=split, divergence=9,
    )  # fmt: skip
    assert text is not None and "The texts split at token 9: ' ,' over ' Brooklyn'" in text
