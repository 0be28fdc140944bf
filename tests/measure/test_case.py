from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from stabilitygate.measure.case import measure_case
from stabilitygate.metrics import Metrics
from stabilitygate.results import Diagnostics
from stabilitygate.samples import Sample, TokenLogprob
from stabilitygate.typed_json import to_json
from tests.support.typed import typed

QUEENS = "He was born in Queens."
SHORT = "Born in Queens."
NYC = "He was born in New York City."


def unit(angle_degrees: float) -> list[float]:
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a)]


@pytest.fixture
def embedder(table_embedder: Any) -> Any:
    return table_embedder({QUEENS: unit(0), SHORT: unit(10), NYC: unit(40)})


def test_metric_keys_are_exactly_the_design_keys() -> None:
    design = [
        *("unique_completions", "mode_share", "tar_raw", "parsed_agreement", "tar_parsed", "parse_failures"),
        *("cosine_min", "cosine_mean", "cosine_std", "semantic_clusters", "semantic_agreement", "semantic_entropy"),
        *("divergence_token", "accuracy", "any_correct", "all_correct"),
    ]
    written = [*design, "schema_valid_share", "prompt_tokens", "completion_tokens", "length_cut"]
    assert list(to_json(Metrics())) == written  # the keys every case has, null when not measured


def test_every_metric_on_a_hand_computed_case(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    case = make_case({"regex": "(Queens|New York City)"}, "Queens")
    texts = [QUEENS] * 7 + [SHORT] * 2 + [NYC]
    m = measure_case(case, make_samples(texts), embedder=embedder)
    c10, c40, c30 = (math.cos(math.radians(a)) for a in (10, 40, 30))
    pairs = [1.0] * 22 + [c10] * 14 + [c40] * 7 + [c30] * 2  # 45 = 10 * 9 / 2 pairs
    mean = sum(pairs) / 45
    std = math.sqrt(sum((p - mean) ** 2 for p in pairs) / 45)
    expected = {
        "unique_completions": 3,
        "mode_share": 0.7,
        "tar_raw": False,
        "parsed_agreement": 0.9,
        "tar_parsed": False,
        "parse_failures": 0,
        "cosine_min": round(c40, 6),
        "cosine_mean": round(mean, 6),
        "cosine_std": round(std, 6),
        "semantic_clusters": 2,  # QUEENS + SHORT (cos 0.985), NYC alone
        "semantic_agreement": 0.9,
        "semantic_entropy": round(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)), 6),
        "divergence_token": 1,
        "accuracy": 0.9,
        "any_correct": True,
        "all_correct": False,
        "schema_valid_share": None,
        "prompt_tokens": None,
        "completion_tokens": None,
        "length_cut": 0,
        # Where the 0.95 bar cut: QUEENS-SHORT (10 degrees) inside, SHORT-NYC (30 degrees) across.
        "cluster_cosine_min_within": round(c10, 6),
        "cluster_cosine_max_across": round(c30, 6),
    }
    assert m.metrics == typed(Metrics, expected)
    assert to_json(m.diagnostics)["cluster_pairs"] == {
        "least_similar_within": {"cosine": round(c10, 6), "texts": [QUEENS, SHORT]},
        "most_similar_across": {"cosine": round(c30, 6), "texts": [SHORT, NYC]},
    }
    assert to_json(m.completions) == [
        {"text": QUEENS, "count": 7},
        {"text": SHORT, "count": 2},
        {"text": NYC, "count": 1},
    ]
    assert to_json(m.answers) == [{"answer": "Queens", "count": 9}, {"answer": "New York City", "count": 1}]
    assert (m.samples_requested, m.samples_ok, m.sample_errors) == (10, 10, 0)


def test_all_identical(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    m = measure_case(make_case({"regex": "Queens"}, samples=5), make_samples([QUEENS] * 5), embedder=embedder)
    expected = {
        "unique_completions": 1,
        "mode_share": 1.0,
        "tar_raw": True,
        "parsed_agreement": 1.0,
        "tar_parsed": True,
        "parse_failures": 0,
        "cosine_min": 1.0,
        "cosine_mean": 1.0,
        "cosine_std": 0.0,
        "semantic_clusters": 1,
        "semantic_agreement": 1.0,
        "semantic_entropy": 0.0,
        "length_cut": 0,
        # One distinct text: no pair inside a cluster, no second cluster.
        "cluster_cosine_min_within": None,
        "cluster_cosine_max_across": None,
    }
    assert m.metrics == typed(Metrics, expected)
    assert m.diagnostics == Diagnostics()
    assert m.notes == ()


def test_all_different(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    m = measure_case(make_case(samples=3), make_samples([QUEENS, SHORT, NYC]), embedder=embedder)
    assert m.metrics.unique_completions == 3
    assert m.metrics.mode_share == 0.333333
    assert m.metrics.cosine_min == round(math.cos(math.radians(40)), 6)
    assert m.metrics.semantic_clusters == 2
    assert m.metrics.semantic_agreement == 0.666667
    assert m.metrics.parsed_agreement is None  # no parser: parsed keys are null
    assert m.metrics.parse_failures is None
    assert m.answers == ()
    assert [c.text for c in m.completions] == sorted([QUEENS, SHORT, NYC])


def test_one_successful_sample_has_no_pairs(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    m = measure_case(
        make_case({"regex": "Queens"}, "Queens", samples=2), make_samples([None, QUEENS]), embedder=embedder
    )
    assert (m.samples_ok, m.sample_errors) == (1, 1)
    assert (m.metrics.cosine_min, m.metrics.cosine_mean, m.metrics.cosine_std) == (None, None, None)
    assert m.metrics.semantic_clusters == 1
    assert m.metrics.semantic_entropy == 0.0
    assert m.metrics.tar_raw is True
    assert m.metrics.divergence_token is None
    assert m.metrics.all_correct is True
    assert to_json(m.errors) == [{"error": "http_500: server error", "count": 1}]


def test_all_samples_failed(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    samples = make_samples([None, None, None])
    m = measure_case(make_case({"json": "/x"}, "y", samples=3), samples, embedder=embedder)
    expected = {
        "unique_completions": 0,
        "parse_failures": 0,
        "length_cut": 0,
    }
    assert m.metrics == typed(Metrics, expected)
    assert (m.samples_ok, m.sample_errors, m.completions, m.answers) == (0, 3, (), ())
    assert to_json(m.errors) == [{"error": "http_500: server error", "count": 3}]
    assert embedder.calls == []  # nothing to embed


def test_without_embedder_semantic_keys_are_null(make_case: Callable[..., Any], make_samples: Any) -> None:
    m = measure_case(make_case(), make_samples([QUEENS, NYC]), embedder=None)
    semantic = (
        "cosine_min",
        "cosine_mean",
        "cosine_std",
        "semantic_clusters",
        "semantic_agreement",
        "semantic_entropy",
    )
    assert all(getattr(m.metrics, k) is None for k in semantic)
    assert m.metrics.unique_completions == 2


def test_each_distinct_text_is_embedded_once(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    texts = [QUEENS] * 30 + [SHORT] * 15 + [NYC] * 5
    random.Random(1).shuffle(texts)
    measure_case(make_case(samples=50), make_samples(texts), embedder=embedder)
    assert len(embedder.calls) == 1
    assert sorted(embedder.calls[0]) == sorted([QUEENS, SHORT, NYC])


def test_arrival_order_does_not_matter(make_case: Callable[..., Any], embedder: Any) -> None:
    case = make_case({"regex": "(Queens|New York City)"}, "Queens", samples=12)
    texts = [QUEENS, SHORT, NYC, QUEENS, None, SHORT, QUEENS, NYC, QUEENS, SHORT, QUEENS, QUEENS]
    samples = [
        Sample(
            case="c",
            index=i,
            text=t,
            error=None if t else "timeout",
            fingerprint=f"fp_{i % 2}",
            usage={"prompt_tokens": 10, "completion_tokens": 5},
            finish_reason="stop",
        )
        for i, t in enumerate(texts)
    ]
    reference = measure_case(case, samples, embedder=embedder)
    for seed in range(5):
        shuffled = samples[:]
        random.Random(seed).shuffle(shuffled)
        assert measure_case(case, shuffled, embedder=embedder) == reference


def test_counts_usage_finish_reasons_and_fingerprints(make_case: Callable[..., Any]) -> None:
    samples = [
        Sample(
            case="c",
            index=0,
            text="a",
            fingerprint="fp_1",
            usage={"prompt_tokens": 12, "completion_tokens": 3},
            finish_reason="stop",
        ),
        Sample(
            case="c",
            index=1,
            text="a b",
            fingerprint="fp_2",
            usage={"prompt_tokens": 12, "completion_tokens": 9},
            finish_reason="length",
        ),
        Sample(
            case="c",
            index=2,
            text="a",
            fingerprint="fp_2",
            usage={"prompt_tokens": 12, "completion_tokens": 3},
            finish_reason="stop",
        ),
        Sample(case="c", index=3, text=None, error="http_429: rate limited"),
    ]
    m = measure_case(make_case(samples=4), samples, embedder=None)
    assert (m.metrics.prompt_tokens, m.metrics.completion_tokens, m.metrics.length_cut) == (36, 15, 1)
    assert m.usage == {"completion_tokens": 15, "prompt_tokens": 36}
    assert m.finish_reasons == {"length": 1, "stop": 2}
    assert to_json(m.fingerprints) == [{"fingerprint": "fp_2", "count": 2}, {"fingerprint": "fp_1", "count": 1}]
    assert to_json(m.errors) == [{"error": "http_429: rate limited", "count": 1}]
    assert "1 of 3 completions were cut at max_tokens (finish_reason length)" in m.notes


def test_requested_samples_and_missing_ones(make_case: Callable[..., Any], make_samples: Any) -> None:
    m = measure_case(make_case(samples=10), make_samples(["x"] * 4), embedder=None)
    assert m.samples_requested == 10
    assert m.notes == ("only 4 of 10 requested samples were drawn",)
    m = measure_case(make_case(samples=10), make_samples(["x"] * 4), embedder=None, samples_requested=4)
    assert (m.samples_requested, m.notes) == (4, ())


def test_notes_for_truncated_and_whitespace_only_completions(
    make_case: Callable[..., Any], make_samples: Any, table_embedder: Any
) -> None:
    long_text, spaced = "one two three", "one  two   three"
    embedder = table_embedder({long_text: [1, 0], spaced: [1, 0]}, max_word_pieces=4)
    m = measure_case(make_case(samples=3), make_samples([long_text, spaced, long_text]), embedder=embedder)
    assert m.metrics.divergence_token is None
    assert m.notes == (
        "3 completions are longer than the embedding model's 4 word pieces: their semantic numbers cover only the "
        "first 4",
        "the completions differ only in whitespace",
    )
    m = measure_case(
        make_case(samples=2),
        make_samples([long_text, "x"]),
        embedder=table_embedder({long_text: [1, 0], "x": [0, 1]}, max_word_pieces=4),
    )
    assert m.notes[0].startswith("1 completion is longer than")


def test_parse_failures_are_noted_and_suggested_about(make_case: Callable[..., Any], make_samples: Any) -> None:
    m = measure_case(make_case({"choice": ["A", "B"]}, samples=4), make_samples(["A", "A", "hmm", "A"]), embedder=None)
    assert m.metrics.parse_failures == 1
    assert m.notes == ("1 of 4 answers did not parse (first: no label found)",)
    assert m.diagnostics.suggestion.startswith("1 of 4 answers did not parse (no label found)")


def test_schema_valid_share(make_case: Callable[..., Any], make_samples: Any) -> None:
    case = make_case(
        {"json": "/n", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
        samples=4,
    )
    m = measure_case(case, make_samples(['{"n": 1}', '{"n": 1}', '{"n": "one"}', '{"n": 1.0}']), embedder=None)
    assert m.metrics.schema_valid_share == 0.75
    assert m.metrics.parse_failures == 1
    assert to_json(m.answers) == [{"answer": "1", "count": 3}]


def test_logprob_diagnostics_for_the_modal_completion(make_case: Callable[..., Any]) -> None:
    queens = "Queens, New York"
    lp = (
        TokenLogprob("Queens", -0.6, "New", -0.65),
        TokenLogprob(",", -0.01, ".", -5.0),
        TokenLogprob(" New", -0.01, " NY", -4.0),
        TokenLogprob(" York", -0.001, " Jersey", -7.0),
    )
    samples = [Sample(case="c", index=i, text=queens, logprobs=lp) for i in range(3)]
    samples.append(
        Sample(case="c", index=3, text="New York City", logprobs=(TokenLogprob("New", -0.6, "Queens", -0.62),))
    )
    m = measure_case(make_case({"regex": "(Queens|City)"}, samples=4), samples, embedder=None)
    assert m.metrics.divergence_token == 1
    assert to_json(replace(m.diagnostics, suggestion=None)) == {
        "min_margin": 0.05,
        "min_margin_position": 1,
        "min_margin_token": "Queens",
        "min_margin_runner_up": "New",
        "divergence_at_min_margin": True,
        # where the texts split (docs/design.md §16.2): here the closest call itself
        "split_position": 1,
        "split_token": "Queens",
        "split_runner_up": "New",
        "split_margin": 0.05,
    }
    assert m.diagnostics.suggestion.startswith("The answer itself varies: 2 different answers")
    assert "The texts split at token 1: 'Queens' over 'New', logprob margin 0.05" in m.diagnostics.suggestion


def test_form_only_variation_gets_a_suggestion(make_case: Callable[..., Any], make_samples: Any) -> None:
    m = measure_case(
        make_case({"choice": ["A", "B"]}, samples=3), make_samples(["A", "(A)", "Answer: A"]), embedder=None
    )
    assert m.metrics.tar_parsed is True and m.metrics.tar_raw is False
    assert "form only" in m.diagnostics.suggestion


def test_measurement_is_json_ready(make_case: Callable[..., Any], make_samples: Any, embedder: Any) -> None:
    m = measure_case(make_case({"json": ""}, samples=3), make_samples([QUEENS, SHORT, None]), embedder=embedder)
    text = json.dumps(to_json(m), sort_keys=True)
    assert json.loads(text)["metrics"]["parse_failures"] == 2
