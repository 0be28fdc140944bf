from __future__ import annotations

from stabilitygate.measure.agreement import (
    accuracy_metrics,
    answer_counts,
    count_texts,
    parse_texts,
    parsed_metrics,
    ranked,
    raw_metrics,
)
from stabilitygate.metrics import Metrics
from stabilitygate.plain import round_optional
from stabilitygate.suite.model import AnswerSpec

LETTER = AnswerSpec.model_validate({"choice": ["A", "B", "C"]})


def test_count_texts_keeps_first_appearance_order() -> None:
    assert list(count_texts(["b", "a", "b", "c", "a", "b"]).items()) == [("b", 3), ("a", 2), ("c", 1)]


def test_ranked_is_count_desc_then_value_for_mixed_types() -> None:
    assert ranked({"b": 2, "a": 2, "c": 5}) == [("c", 5), ("a", 2), ("b", 2)]
    assert ranked({10: 1, 9: 1, 2.5: 3}) == [(2.5, 3), (10, 1), (9, 1)]  # by JSON text: "10" < "9"


def test_raw_metrics_by_hand() -> None:
    assert raw_metrics(count_texts(["x"] * 10)) == Metrics(unique_completions=1, mode_share=1.0, tar_raw=True)
    assert raw_metrics(count_texts(["x"] * 7 + ["y", "y", "z"])) == Metrics(
        unique_completions=3, mode_share=0.7, tar_raw=False
    )
    assert raw_metrics(count_texts(["a", "b", "c"])) == Metrics(
        unique_completions=3, mode_share=0.333333, tar_raw=False
    )
    assert raw_metrics({}) == Metrics(unique_completions=0, mode_share=None, tar_raw=None)


def test_parsed_metrics_count_failures_against_agreement() -> None:
    counts = count_texts(["Answer: A"] * 5 + ["(a)"] * 2 + ["B"] + ["no idea"] * 2)
    parsed = parse_texts(LETTER, counts)
    assert answer_counts(parsed, counts) == {"A": 7, "B": 1}
    assert parsed_metrics(LETTER, parsed, counts) == Metrics(
        parsed_agreement=0.7, tar_parsed=False, parse_failures=2, schema_valid_share=None
    )


def test_tar_parsed_needs_every_sample_parsed_and_equal() -> None:
    counts = count_texts(["A", "(a)", "The answer is A."])
    assert parsed_metrics(LETTER, parse_texts(LETTER, counts), counts).tar_parsed is True
    counts = count_texts(["A", "A", "nothing"])
    metrics = parsed_metrics(LETTER, parse_texts(LETTER, counts), counts)
    assert (metrics.tar_parsed, metrics.parsed_agreement) == (False, 0.666667)


def test_all_parse_failures_give_zero_agreement() -> None:
    counts = count_texts(["?", "??"])
    assert parsed_metrics(LETTER, parse_texts(LETTER, counts), counts) == Metrics(
        parsed_agreement=0.0, tar_parsed=False, parse_failures=2, schema_valid_share=None
    )


def test_schema_valid_share_counts_samples_meeting_the_schema() -> None:
    checked = AnswerSpec.model_validate(
        {"json": "/n", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    )
    counts = count_texts(['{"n": 1}'] * 3 + ['{"n": "x"}'] + ["none"])
    metrics = parsed_metrics(checked, parse_texts(checked, counts), counts)
    assert metrics.schema_valid_share == 0.6
    assert metrics.parse_failures == 2


def test_accuracy_with_expected() -> None:
    counts = count_texts(["A"] * 3 + ["B"])
    parsed = parse_texts(LETTER, counts)
    assert accuracy_metrics(LETTER, "a", parsed, counts) == Metrics(accuracy=0.75, any_correct=True, all_correct=False)
    assert accuracy_metrics(LETTER, "C", parsed, counts) == Metrics(accuracy=0.0, any_correct=False, all_correct=False)
    assert accuracy_metrics(LETTER, None, parsed, counts) == Metrics()


def test_accuracy_without_a_parser_compares_the_stripped_text() -> None:
    counts = count_texts(["Queens\n", "Queens", "Brooklyn"])
    assert accuracy_metrics(None, "Queens", None, counts).accuracy == 0.666667
    assert accuracy_metrics(None, 42, None, count_texts(["42"])).all_correct is True


def test_rounded_never_gives_negative_zero() -> None:
    assert str(round_optional(-1e-9)) == "0.0"
    assert round_optional(None) is None
    assert round_optional(2 / 3) == 0.666667


NUMBER = AnswerSpec.model_validate({"number": True})
TEXT = AnswerSpec.model_validate({"text": {"normalize": ["strip", "lower", "punctuation"]}})


def accuracy(spec: AnswerSpec | None, expected: object, texts: list[str]) -> float | None:
    counts = count_texts(texts)
    parsed = parse_texts(spec, counts) if spec is not None else None
    share = accuracy_metrics(spec, expected, parsed, counts).accuracy
    assert share is None or isinstance(share, float)
    return share


def test_number_answers_have_one_canonical_form_in_answers_and_accuracy() -> None:
    texts = ["19", "19.0", "The answer is 19.00", "12 + 7 = 19.", "12 + 7 = 8."]
    counts = count_texts(texts)
    assert ranked(answer_counts(parse_texts(NUMBER, counts), counts)) == [(19, 4), (8, 1)]
    assert {accuracy(NUMBER, expected, texts) for expected in (19, "19", 19.0, "19.00", " 19 ")} == {0.8}


def test_contains_matches_a_text_answer_after_its_normalization() -> None:
    texts = ["The capital of France is Paris.", "Paris", "PARIS!", "Lyon, I think."]
    assert accuracy(TEXT, "paris", texts) == 0.5  # a plain value is the whole normalized answer
    assert accuracy(TEXT, {"contains": "Paris"}, texts) == 0.75
    assert accuracy(TEXT, {"contains": "France is Paris"}, texts) == 0.25
    assert accuracy(TEXT, {"contains": "?!"}, texts) == 0.0  # normalizes to nothing: matches nothing


def test_regex_expected_searches_the_normalized_answer() -> None:
    texts = ["The capital of France is Paris.", "Comparison shopping", "paris"]
    assert accuracy(TEXT, {"regex": r"\bparis\b"}, texts) == 0.666667
    assert accuracy(TEXT, {"contains": "paris"}, texts) == 1.0  # containment has no word boundaries
    assert accuracy(TEXT, {"regex": r"^Paris"}, texts) == 0.0  # the answer was lowercased


def test_matchers_test_the_completion_without_a_parser_and_the_group_with_regex() -> None:
    assert accuracy(None, {"contains": "Paris"}, ["It is Paris.", "paris", "Lyon"]) == 0.333333
    assert accuracy(None, {"regex": r"(?i)paris"}, ["It is Paris.", "paris", "Lyon"]) == 0.666667
    city = AnswerSpec.model_validate({"regex": r"is (\w+)"})
    assert accuracy(city, {"contains": "ar"}, ["It is Paris.", "This is Lyon", "no"]) == 0.333333


def test_a_json_answer_takes_a_mapping_as_its_expected_value() -> None:
    whole = AnswerSpec.model_validate({"json": ""})
    assert accuracy(whole, {"contains": "x"}, ['{"contains": "x"}', '{"a": "x"}']) == 0.5


def test_partial_numbers_join_into_one_case_s_metrics() -> None:
    counts = count_texts(["A", "A", "B"])
    raw, parsed = raw_metrics(counts), parsed_metrics(LETTER, parse_texts(LETTER, counts), counts)
    joined = raw.joined(parsed, Metrics(length_cut=0))
    assert (joined.unique_completions, joined.parsed_agreement, joined.length_cut) == (2, 0.666667, 0)
    assert joined.cosine_min is None and raw.joined() == raw
