from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stabilitygate.measure.case import measure_case
from stabilitygate.measure.summary import suite_summary
from stabilitygate.typed_json import to_json


def test_suite_shares_by_hand(make_case: Callable[..., Any], make_samples: Any) -> None:
    letter = {"choice": ["A", "B"]}
    cases = [
        make_case(letter, "A", case_id="stable-right"),  # tar_raw, tar_parsed, any, all
        make_case(letter, "A", case_id="wobbly"),  # answers A and B: any, not all
        make_case(letter, "B", case_id="form-only"),  # "A" / "(A)": tar_parsed, not tar_raw; never right
        make_case(None, None, case_id="free-text"),  # no parser, no expected: tar_raw only
    ]
    texts = {
        "stable-right": ["A"] * 4,
        "wobbly": ["A", "A", "B", "A"],
        "form-only": ["A", "(A)", "A", "A"],
        "free-text": ["same"] * 4,
    }
    measurements = [measure_case(c, make_samples(texts[c.id]), embedder=None) for c in cases]
    assert to_json(suite_summary(measurements, cases)) == {
        "samples_requested": 40,  # N = 10 per case, 4 drawn
        "samples_ok": 16,
        "sample_errors": 0,
        "prompt_tokens": None,  # no sample reported usage
        "completion_tokens": None,
        "tar_raw": 0.5,  # stable-right, free-text of 4
        "tar_parsed": 0.666667,  # stable-right, form-only of the 3 with a parser
        "best_possible_accuracy": 0.666667,  # stable-right, wobbly of the 3 with expected
        "worst_possible_accuracy": 0.333333,  # stable-right
        "accuracy_spread": 0.333333,
    }


def test_cases_without_samples_or_expected_values(make_case: Callable[..., Any], make_samples: Any) -> None:
    cases = [make_case({"number": True}, None, case_id="a"), make_case({"number": True}, 3, case_id="b")]
    measurements = [
        measure_case(cases[0], make_samples(["1", "1"]), embedder=None),
        measure_case(cases[1], make_samples([None, None]), embedder=None),  # nothing measured
    ]
    assert to_json(suite_summary(measurements, cases)) == {
        "samples_requested": 20,
        "samples_ok": 2,
        "sample_errors": 2,
        "prompt_tokens": None,
        "completion_tokens": None,
        "tar_raw": 1.0,
        "tar_parsed": 1.0,
        "best_possible_accuracy": None,
        "worst_possible_accuracy": None,
        "accuracy_spread": None,
    }
    assert suite_summary([], []).tar_raw is None


def test_token_totals_add_up_over_cases(make_case: Callable[..., Any], make_samples: Any) -> None:
    from dataclasses import replace

    cases = [make_case(None, None, case_id="a"), make_case(None, None, case_id="b")]
    samples = [
        [replace(s, usage={"prompt_tokens": 5, "completion_tokens": i + 1}) for i, s in enumerate(make_samples(t))]
        for t in (["x", "y"], ["z", "z", "z"])
    ]
    measurements = [measure_case(c, s, embedder=None) for c, s in zip(cases, samples, strict=True)]
    summary = suite_summary(measurements, cases)
    assert summary.prompt_tokens == 25 and summary.completion_tokens == (1 + 2) + (1 + 2 + 3)
