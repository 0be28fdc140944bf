from __future__ import annotations

from stabilitygate.measure.diagnostics import NearTie, near_tie, near_tie_diagnostics, suggestion
from stabilitygate.results import Diagnostics
from stabilitygate.typed_json import to_json

# "He was born in Queens" as provider tokens, with a near-tie at " Queens" (runner-up " New")
TEXT = "He was born in Queens"
LOGPROBS = (
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
    logprobs = (
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
    logprobs = (("New York", -0.1, "Queens", -0.15), (",", -0.1, ".", -3.0), (" USA", -0.1, " US", -2.0))
    tie = near_tie(logprobs, text, divergence=3)  # words: New(1) York(2) ,(3): right after the tie's last word
    assert tie is not None and tie.position == 1 and tie.divergence_at_tie is True


def test_whitespace_only_token_points_at_the_next_word() -> None:
    text = "Yes\nNo"
    logprobs = (("Yes", -0.1, "No", -3.0), ("\n", -0.2, ".", -0.25), ("No", -0.1, "Yes", -2.0))
    assert near_tie(logprobs, text, divergence=2).divergence_at_tie is True
    assert near_tie(logprobs, text, divergence=3).divergence_at_tie is False


def test_tokens_that_do_not_spell_the_text_leave_the_position_question_open() -> None:
    tie = near_tie(LOGPROBS, "something else", divergence=5)
    assert tie is not None and tie.margin == 0.02 and tie.divergence_at_tie is None


def test_entries_without_a_runner_up_are_skipped_and_none_without_any() -> None:
    logprobs = (("A", -0.1, None, None), ("B", -0.5, "C", -0.9), ("D", -0.1))
    tie = near_tie(logprobs, "ABD", divergence=None)
    assert tie is not None and (tie.position, tie.margin, tie.runner_up) == (2, 0.4, "C")
    assert near_tie((("A", -0.1, None, None),), "A", divergence=None) is None
    assert near_tie((), "", divergence=None) is None


def test_equal_margins_pick_the_first_token() -> None:
    logprobs = (("a", -0.5, "b", -0.6), ("c", -0.5, "d", -0.6))
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


def test_nothing_to_suggest() -> None:
    assert advice() is None  # stable in answer and in form
    assert advice(parser=None, unique_completions=4) is None
    assert advice(samples_ok=1) is None
