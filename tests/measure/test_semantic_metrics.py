"""A case's semantic numbers with clusters by an entailment judge's recorded judgments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stabilitygate.measure.case import measure_case
from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.measure.meaning import JudgmentLookup
from stabilitygate.suite.model import ProviderConfig
from stabilitygate.typed_json import to_json

EVENING, PM, FIVE = "Shuts at 9 in the evening.", "Closes at 9 pm.", "Closes at 5."
KEY = "judge-key"


def judged_case(make_case: Callable[..., Any]) -> Any:
    return make_case().model_copy(update={"entailment_judge": ProviderConfig(type="openai", model="judge")})


def lookup(pairs: dict[tuple[str, str], str]) -> JudgmentLookup:
    return JudgmentLookup(KEY, {PairKey.of(KEY, a, b): Judgment.of_reply(reply) for (a, b), reply in pairs.items()})


def test_clusters_come_from_the_judgments_and_no_embedder_is_needed(
    make_case: Callable[..., Any], make_samples: Any
) -> None:
    meaning = lookup({(EVENING, PM): "entailment", (PM, EVENING): "entailment", (EVENING, FIVE): "contradiction"})
    m = measure_case(
        judged_case(make_case), make_samples([EVENING] * 5 + [PM] * 3 + [FIVE] * 2), embedder=None, meaning=meaning
    )
    assert (m.metrics.semantic_clusters, m.metrics.semantic_agreement) == (2, 0.8)
    assert m.metrics.semantic_entropy == 0.500402
    assert m.metrics.cosine_min is None  # no embedder: no cosine numbers
    assert "cluster_cosine_min_within" not in to_json(m.metrics)
    assert len(meaning.used) == 3


def test_a_judge_overrides_the_cosine_clusters_but_keeps_the_cosine_numbers(
    make_case: Callable[..., Any], make_samples: Any, table_embedder: Any
) -> None:
    # The embedder would put all three together; the judge says FIVE means something else.
    embedder = table_embedder({EVENING: [1.0, 0.0], PM: [1.0, 0.01], FIVE: [1.0, 0.02]})
    meaning = lookup({(EVENING, PM): "entailment", (PM, EVENING): "entailment", (EVENING, FIVE): "neutral"})
    m = measure_case(
        judged_case(make_case), make_samples([EVENING] * 5 + [PM] * 3 + [FIVE] * 2), embedder=embedder, meaning=meaning
    )
    assert m.metrics.semantic_clusters == 2
    assert m.metrics.cosine_min is not None and m.metrics.cosine_min > 0.99
    assert m.diagnostics.cluster_pairs is None


def test_a_missing_judgment_leaves_no_clusters_and_says_why(make_case: Callable[..., Any], make_samples: Any) -> None:
    meaning = JudgmentLookup(KEY, {}, {PairKey.of(KEY, EVENING, PM): "http_500: scripted 500"})
    m = measure_case(judged_case(make_case), make_samples([EVENING] * 5 + [PM] * 5), embedder=None, meaning=meaning)
    assert m.metrics.semantic_clusters is None and m.metrics.semantic_agreement is None
    assert m.diagnostics.entailment_error is not None and "scripted 500" in m.diagnostics.entailment_error


def test_one_distinct_text_needs_no_judgment(make_case: Callable[..., Any], make_samples: Any) -> None:
    meaning = JudgmentLookup(KEY, {})
    m = measure_case(judged_case(make_case), make_samples([PM] * 4), embedder=None, meaning=meaning)
    assert (m.metrics.semantic_clusters, m.metrics.semantic_agreement) == (1, 1.0)
    assert meaning.used == {}
