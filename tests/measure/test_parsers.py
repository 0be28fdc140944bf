from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from stabilitygate.jsonpointer import MAX_POINTERS, nearest_pointer, pointers_in, resolve_pointer
from stabilitygate.measure.parsers import ParsedAnswer, normalize_expected, parse_answer, parse_number
from stabilitygate.suite.model import AnswerSpec


def spec(**kwargs: Any) -> AnswerSpec:
    return AnswerSpec.model_validate(kwargs)


def value(answer_spec: AnswerSpec, text: str) -> Any:
    parsed = parse_answer(answer_spec, text)
    assert parsed.ok, parsed.error
    return parsed.value


# -- json ------------------------------------------------------------------------------------------------

BOROUGH = spec(json="/borough")


@pytest.mark.parametrize(
    "text",
    [
        '{"borough": "Queens"}',
        '  {"borough":"Queens", "city": "New York"}\n',
        'Sure! Here it is:\n```json\n{"borough": "Queens"}\n```\nAnything else?',
        'He was born in {Queens} (a borough). Answer: {"borough": "Queens"} - done',
        '[1, 2] and then {"borough": "Queens"}',
    ],
)
def test_json_pointer_finds_the_value_in_documents_fences_and_prose(text: str) -> None:
    assert parse_answer(BOROUGH, text) == ParsedAnswer(ok=True, value='"Queens"')


def test_json_whole_document_is_canonical_so_equal_documents_compare_equal() -> None:
    whole = spec(json="")
    a = value(whole, '{"b": 1.0, "a": [2.50, 3], "c": {"y": null, "x": true}}')
    b = value(whole, 'Result: {"c":{"x":true,"y":null},"a":[2.5,3],"b":1}')
    assert a == b == '{"a":[2.5,3],"b":1,"c":{"x":true,"y":null}}'


def test_json_whole_document_may_be_a_scalar() -> None:
    assert value(spec(json=""), ' "Queens" ') == '"Queens"'
    assert value(spec(json=""), "```\n42.0\n```") == "42"


def test_json_keeps_non_ascii_text_as_is() -> None:
    assert value(spec(json="/city"), '{"city": "Zürich"}') == '"Zürich"'


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("/a/0/b", 1),
        ("/a/1", "x"),
        ("/m~1n", "slash"),
        ("/m~0n", "tilde"),
        ("/", "empty key"),
        ("", {"a": [{"b": 1}, "x"], "m/n": "slash", "m~n": "tilde", "": "empty key"}),
    ],
)
def test_pointer_resolution_follows_rfc_6901(pointer: str, expected: Any) -> None:
    doc = {"a": [{"b": 1}, "x"], "m/n": "slash", "m~n": "tilde", "": "empty key"}
    assert resolve_pointer(doc, pointer) == (True, expected)


@pytest.mark.parametrize("pointer", ["/a/2", "/a/-", "/a/01", "/missing", "/a/0/b/c"])
def test_pointer_to_nothing_is_not_found(pointer: str) -> None:
    assert resolve_pointer({"a": [{"b": 1}, "x"]}, pointer) == (False, None)


def test_json_failures_say_why() -> None:
    assert parse_answer(BOROUGH, "born in Queens") == ParsedAnswer(ok=False, error="no JSON document found")
    assert parse_answer(BOROUGH, '{"city": "NYC"}') == ParsedAnswer(ok=False, error="the JSON has nothing at /borough")


def test_a_pointer_that_misses_names_the_nearest_pointer_the_json_has() -> None:
    typo = spec(json="/catgory")
    assert parse_answer(typo, '{"category": "billing", "confidence": 0.9}') == ParsedAnswer(
        ok=False, error="the JSON has nothing at /catgory (did you mean /category?)"
    )
    nested = parse_answer(spec(json="/result/lable"), 'Here: {"result": {"label": "bug"}, "id": 3}')
    assert nested.error == "the JSON has nothing at /result/lable (did you mean /result/label?)"
    escaped = parse_answer(spec(json="/a~1bb"), '{"a/b": 1}')  # a key with a slash, spelled as RFC 6901 says
    assert escaped.error == "the JSON has nothing at /a~1bb (did you mean /a~1b?)"


def test_nearest_pointer_reads_a_bounded_number_of_pointers() -> None:
    wide = {f"key{i}": i for i in range(10 * MAX_POINTERS)}
    assert len(pointers_in(wide)) == MAX_POINTERS
    assert nearest_pointer({"x": {"y": 1}}, "/zzzzzz") is None  # nothing close: no guess


def test_json_rejects_nan_and_survives_absurd_nesting() -> None:
    assert not parse_answer(spec(json="/x"), '{"x": NaN}').ok
    assert not parse_answer(spec(json=""), "[" * 100_000).ok


def test_json_pointer_without_slash_is_refused_when_the_suite_loads() -> None:
    with pytest.raises(ValidationError, match="not an RFC 6901 pointer"):
        spec(json="borough")


# -- regex, number, text ---------------------------------------------------------------------------------


def test_regex_takes_the_first_group_else_the_match() -> None:
    assert value(spec(regex=r"born in (\w+)"), "He was born in Queens, NY") == "Queens"
    assert value(spec(regex=r"Q\w+"), "He was born in Queens, NY") == "Queens"
    assert parse_answer(spec(regex=r"born in (\w+)"), "no idea").error == "the pattern does not match"
    assert not parse_answer(spec(regex=r"(x)?y"), "y").ok


def test_an_empty_regex_answer_is_a_parse_failure() -> None:
    # "code: " then nothing: an empty answer, the same in every sample, is no answer (as for `text`).
    assert parse_answer(spec(regex=r"code: (\w*)"), "code: ").error == "the pattern matched an empty answer"
    assert value(spec(regex=r"code: (\w*)"), "code: x1") == "x1"


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("1,234.50", 1234.5),
        ("$1,234.50", 1234.5),
        ("It is -3 degrees", -3),
        ("-3", -3),
        ("3.", 3),
        ("1e3", 1000),
        ("about 1.5E-2 of it", 0.015),
        ("The total is $1,234,567.", 1234567),
        ("42.0", 42),
        ("19.00", 19),
        ("−7", -7),
        ("roughly .5", 0.5),
        ("0.5", 0.5),
        ("19%", 19),
        ("19 apples.", 19),
        ("-$5 and $-6", -6),
        ("version v2 says 7", 7),
        ("(-12)", -12),
        ("-0", 0),
        ("-0.0", 0),
    ],
)
def test_number_forms_read_as_one_canonical_value(text: str, number: float) -> None:
    parsed = value(spec(number=True), text)
    assert parsed == number
    assert type(parsed) is type(number)


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("12 + 7 = 8.", 8),  # the text's answer, wrong as it is: not the first number
        ("12 + 7 = 19.", 19),
        ("First 12, then 7 more: 19 in all", 19),
        ("In 2023, 19 people came", 19),
        ("19 people came in 2023.", 19),  # a year closing the clause is a date, not the answer
        ("The primes are 2,3,5", 5),
        ("1,5", 1.5),  # a comma that cannot separate thousands is a decimal comma (before issue 26: 5)
        ("1,000", 1000),
        ("1,2345", 1.2345),  # the same (before issue 26: 2345)
        ("Python 3.11.2 printed 7", 7),
    ],
)
def test_without_an_answer_phrase_the_last_number_wins(text: str, number: int) -> None:
    assert value(spec(number=True), text) == number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("The answer is 19. Later I said 20", 19),
        ("Answer: 19 (check: 12 + 7 = 19, not 20)", 19),
        ("12 + 7 = 19\n#### 19\nSee also exercise 4.", 19),
        ("The answer is 18. Wait, 12 + 7 is 19: the answer is 19.", 19),  # a corrected answer: the last
        ("answer = -3.5 so 7 is wrong", -3.5),
        ("The final answer is $\\boxed{1,234}$ out of 2000", 1234),
        ("Answer: **$19** for 3 items", 19),
        ("The answer is approximately 3.14, or 22/7", 3.14),
        ("The answer would be: 42 of the 50", 42),
        ("the answer is nineteen, not 18", 19),  # number words after the phrase are read
        ("The answers: 1, 2, 3", 3),  # "answers" is not the phrase
    ],
)
def test_an_explicit_answer_wins_over_other_numbers(text: str, number: float) -> None:
    assert value(spec(number=True), text) == number


@pytest.mark.parametrize("text", ["nothing at all", "1e999", "v2", "12.3.4", "01.02.2024", "H2O", "12-7"])
def test_texts_without_a_readable_number(text: str) -> None:
    assert not parse_answer(spec(number=True), text).ok


def test_long_runs_after_an_answer_phrase_parse_in_linear_time() -> None:
    # With backtracking whitespace this input took 64 s at 20,000 spaces (quadratic).
    spaces = " " * 50_000
    assert parse_number(f"the answer is{spaces}x, so 7") == 7
    assert parse_number(f"Answer:{spaces}**{spaces}19") == 19


def test_number_failures() -> None:
    assert parse_answer(spec(number=True), "nothing at all").error == "no number found"
    assert parse_answer(spec(number=True), "1e999").error == "the number is out of range"
    assert parse_answer(spec(number=True), "It is 3:2.").error == "3:2 is a ratio, not one number"


@pytest.mark.parametrize(
    ("number", "text", "read"),
    [
        (True, "It is 1,5 km.", 1.5),
        (True, "It is 1,234 km.", 1234),
        ({"decimal_comma": True}, "It is 1,234 km.", 1.234),
        ({"decimal_comma": True}, "It is 1.234 km.", 1234),
        ({"decimal_comma": False}, "It is 1,234 km.", 1234),
        ({}, "It is 1,234 km.", 1234),
    ],
)
def test_decimal_comma_makes_the_comma_the_decimal_mark(number: Any, text: str, read: float) -> None:
    assert value(spec(number=number), text) == read


def test_expected_reads_with_the_cases_decimal_comma() -> None:
    european = spec(number={"decimal_comma": True})
    assert normalize_expected(european, "1.234,5") == 1234.5
    assert normalize_expected(spec(number=True), "1,234.5") == 1234.5


@given(st.integers(min_value=-(10**12), max_value=10**12), st.sampled_from(["", ".", " apples.", "%"]))
def test_the_last_number_reads_back_whatever_comes_before_or_after(n: int, tail: str) -> None:
    assert parse_number(f"12 + 7 is not it; the count is {n:,}{tail}") == n


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_numbers_written_with_thousands_separators_round_trip(n: int) -> None:
    assert parse_number(f"The count is {n:,} items") == n


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        ([], "  Queens,   New York! "),
        (["strip"], "Queens,   New York!"),
        (["lower"], "  queens,   new york! "),
        (["whitespace"], " Queens, New York! "),
        (["punctuation"], "  Queens   New York "),
        (["strip", "lower", "whitespace", "punctuation"], "queens new york"),
        (["punctuation", "whitespace", "lower", "strip"], "queens new york"),
    ],
)
def test_text_normalisations(steps: list[str], expected: str) -> None:
    assert value(spec(text={"normalize": steps}), "  Queens,   New York! ") == expected


def test_text_that_normalises_to_nothing_did_not_answer() -> None:
    assert parse_answer(spec(text={"normalize": ["strip"]}), "  \n").error == "the answer is empty"


# -- schema ----------------------------------------------------------------------------------------------


def test_schema_failure_is_a_parse_failure_with_schema_valid_false() -> None:
    checked = spec(json="", schema={"type": "object", "required": ["borough"]})
    assert parse_answer(checked, '{"borough": "Queens"}') == ParsedAnswer(
        ok=True, value='{"borough":"Queens"}', schema_valid=True
    )
    failed = parse_answer(checked, '{"city": "NYC"}')
    assert (failed.ok, failed.schema_valid) == (False, False)
    assert failed.error == "fails the schema at the top level: 'borough' is a required property"


def test_schema_applies_to_the_whole_json_document_and_to_other_parsers() -> None:
    # The schema describes the structured output (response_format, tool arguments); the pointer
    # only picks the answer out of it.
    positive = spec(json="/n", schema={"properties": {"n": {"type": "integer", "minimum": 0}}})
    assert parse_answer(positive, '{"n": -1}').error == "fails the schema at /n: -1 is less than the minimum of 0"
    assert parse_answer(spec(json="/n", schema={"required": ["m"]}), '{"n": 1}').schema_valid is False
    nested = spec(json="", schema={"properties": {"n": {"type": "integer"}}})
    assert parse_answer(nested, '{"n": "x"}').error == "fails the schema at /n: 'x' is not of type 'integer'"
    enum = spec(choice=["A", "B"], schema={"enum": ["A"]})
    assert parse_answer(enum, "B").schema_valid is False
    assert parse_answer(spec(number=True, schema={"maximum": 10}), "7").schema_valid is True


def test_schema_valid_is_false_when_nothing_parsed_and_none_without_schema() -> None:
    assert parse_answer(spec(json="/n", schema={"type": "integer"}), "nothing").schema_valid is False
    assert parse_answer(spec(json="/n"), "nothing").schema_valid is None


# -- expected values -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected", "text"),
    [
        ({"json": "/borough"}, "Queens", '{"borough": "Queens"}'),
        ({"json": "/n"}, 42, '{"n": 42.0}'),
        ({"json": ""}, {"b": [1, 2], "a": "x"}, '{"a": "x", "b": [1.0, 2]}'),
        ({"number": True}, 42, "The answer is 42.0"),
        ({"number": True}, 19.0, "12 + 7 = 19."),
        ({"number": True}, "19", "#### 19.00"),
        ({"number": True}, "1,234.5", "1234.50"),
        ({"number": True}, "3/4", "0.75"),
        ({"number": True}, 0.75, "The answer is \\frac{3}{4}"),
        ({"number": True}, "0.75", "She ate 3/4 of it."),
        ({"number": True}, "2/3", "He drank 4/6 of the bottle."),
        ({"number": True}, "3 1/4", "3.25 miles"),
        ({"number": True}, "2 500 000", "2,500,000"),
        ({"choice": ["A", "B", "C"]}, "b", "The answer is (B)"),
        ({"choice": ["A", "B", "C"]}, "(c)", "C"),
        ({"choice": ["yes", "no"]}, "YES", "yes"),
        ({"regex": r"(\d+)"}, 7, "It has 7 legs"),
        ({"regex": r"(true|false)"}, True, "that is true"),
        ({"text": {"normalize": ["lower", "strip", "punctuation"]}}, "Queens!", " queens "),
    ],
)
def test_expected_is_normalised_like_the_parsed_answer(answer: dict[str, Any], expected: Any, text: str) -> None:
    answer_spec = spec(**answer)
    assert normalize_expected(answer_spec, expected) == value(answer_spec, text)


def test_an_exact_fraction_is_not_its_rounding() -> None:
    number = spec(number=True)
    assert value(number, "He drank 2/3 of it") == "2/3"
    assert normalize_expected(number, 0.67) != "2/3"
    assert normalize_expected(number, "0.67") != "2/3"
    # The value is JSON's, so a schema sees a string where the fraction is not a decimal.
    assert parse_answer(spec(number=True, schema={"type": "number"}), "2/3").schema_valid is False


def test_a_number_answer_reads_with_the_rules_of_the_number_reader() -> None:
    assert parse_answer(spec(number=True), "The answer is 4 + 6 = 10.") == ParsedAnswer(ok=True, value=10)
    assert parse_answer(spec(number=True), "It could be 8 or 9.") == ParsedAnswer(
        ok=False, error="no committed answer: 8 or 9"
    )


def test_expected_that_cannot_match_stays_distinct() -> None:
    assert normalize_expected(spec(choice=["A", "B"]), "Z") == "Z"
    assert normalize_expected(spec(json="/x"), "Queens") != normalize_expected(spec(json="/x"), "queens")


class CountingDecoder:
    """The parser's decoder, counting the characters it reads on each start (issue 25, item 6)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.read = 0

    def raw_decode(self, text: str, start: int = 0) -> Any:
        try:
            doc, end = self.inner.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            self.read += max(exc.pos - start, 1)
            raise
        self.read += end - start
        return doc, end


@pytest.mark.parametrize(
    "text",
    [
        ("[" + "1," * 500) * 200,  # every start an open array read to the end of the text
        '{"a": [' * 300 + "x" * 100_000,
        ("see [1, 2, " + "3, " * 2000 + "oops ") * 50 + '{"answer": 7}',
    ],
    ids=["nested-open-arrays", "deep-then-prose", "many-broken-lists"],
)
def test_the_json_hunt_reads_each_character_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    from stabilitygate.measure import parsers

    counting = CountingDecoder(parsers._DECODER)
    monkeypatch.setattr(parsers, "_DECODER", counting)
    parse_answer(AnswerSpec.model_validate({"json": ""}), text)
    # The whole text once, the hunt's budget of 4 reads a character, the one start that crosses it:
    # was up to 2,000 times the text.
    assert counting.read <= len(text) + (4 * len(text) + 64 * 1024) + len(text)


def test_the_json_hunt_still_finds_a_document_after_prose_and_broken_starts() -> None:
    text = "Here [is] my {answer}, and then: " + '{"answer": 7} and that is all'
    assert parse_answer(AnswerSpec.model_validate({"json": "/answer"}), text).value == "7"
