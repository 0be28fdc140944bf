from __future__ import annotations

from stabilitygate.measure.agreement import (
    accuracy_metrics,
    answer_counts,
    count_texts,
    parse_texts,
    parsed_metrics,
    ranked,
    raw_metrics,
    rounded,
)
from stabilitygate.suite.model import AnswerSpec

LETTER = AnswerSpec.model_validate({"choice": ["A", "B", "C"]})


def test_count_texts_keeps_first_appearance_order() -> None:
    assert list(count_texts(["b", "a", "b", "c", "a", "b"]).items()) == [("b", 3), ("a", 2), ("c", 1)]


def test_ranked_is_count_desc_then_value_for_mixed_types() -> None:
    assert ranked({"b": 2, "a": 2, "c": 5}) == [("c", 5), ("a", 2), ("b", 2)]
    assert ranked({10: 1, 9: 1, 2.5: 3}) == [(2.5, 3), (10, 1), (9, 1)]  # by JSON text: "10" < "9"


def test_raw_metrics_by_hand() -> None:
    assert raw_metrics(count_texts(["x"] * 10)) == {"unique_completions": 1, "mode_share": 1.0, "tar_raw": True}
    assert raw_metrics(count_texts(["x"] * 7 + ["y", "y", "z"])) == {
        "unique_completions": 3,
        "mode_share": 0.7,
        "tar_raw": False,
    }
    assert raw_metrics(count_texts(["a", "b", "c"])) == {
        "unique_completions": 3,
        "mode_share": 0.333333,
        "tar_raw": False,
    }
    assert raw_metrics({}) == {"unique_completions": 0, "mode_share": None, "tar_raw": None}


def test_parsed_metrics_count_failures_against_agreement() -> None:
    counts = count_texts(["Answer: A"] * 5 + ["(a)"] * 2 + ["B"] + ["no idea"] * 2)
    parsed = parse_texts(LETTER, counts)
    assert answer_counts(parsed, counts) == {"A": 7, "B": 1}
    assert parsed_metrics(LETTER, parsed, counts) == {
        "parsed_agreement": 0.7,
        "tar_parsed": False,
        "parse_failures": 2,
        "schema_valid_share": None,
    }


def test_tar_parsed_needs_every_sample_parsed_and_equal() -> None:
    counts = count_texts(["A", "(a)", "The answer is A."])
    assert parsed_metrics(LETTER, parse_texts(LETTER, counts), counts)["tar_parsed"] is True
    counts = count_texts(["A", "A", "nothing"])
    metrics = parsed_metrics(LETTER, parse_texts(LETTER, counts), counts)
    assert (metrics["tar_parsed"], metrics["parsed_agreement"]) == (False, 0.666667)


def test_all_parse_failures_give_zero_agreement() -> None:
    counts = count_texts(["?", "??"])
    assert parsed_metrics(LETTER, parse_texts(LETTER, counts), counts) == {
        "parsed_agreement": 0.0,
        "tar_parsed": False,
        "parse_failures": 2,
        "schema_valid_share": None,
    }


def test_schema_valid_share_counts_samples_meeting_the_schema() -> None:
    checked = AnswerSpec.model_validate(
        {"json": "/n", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    )
    counts = count_texts(['{"n": 1}'] * 3 + ['{"n": "x"}'] + ["none"])
    metrics = parsed_metrics(checked, parse_texts(checked, counts), counts)
    assert metrics["schema_valid_share"] == 0.6
    assert metrics["parse_failures"] == 2


def test_accuracy_with_expected() -> None:
    counts = count_texts(["A"] * 3 + ["B"])
    parsed = parse_texts(LETTER, counts)
    assert accuracy_metrics(LETTER, "a", parsed, counts) == {
        "accuracy": 0.75,
        "any_correct": True,
        "all_correct": False,
    }
    assert accuracy_metrics(LETTER, "C", parsed, counts) == {
        "accuracy": 0.0,
        "any_correct": False,
        "all_correct": False,
    }
    assert accuracy_metrics(LETTER, None, parsed, counts) == {
        "accuracy": None,
        "any_correct": None,
        "all_correct": None,
    }


def test_accuracy_without_a_parser_compares_the_stripped_text() -> None:
    counts = count_texts(["Queens\n", "Queens", "Brooklyn"])
    assert accuracy_metrics(None, "Queens", None, counts)["accuracy"] == 0.666667
    assert accuracy_metrics(None, 42, None, count_texts(["42"]))["all_correct"] is True


def test_rounded_never_gives_negative_zero() -> None:
    assert str(rounded(-1e-9)) == "0.0"
    assert rounded(None) is None
    assert rounded(2 / 3) == 0.666667
