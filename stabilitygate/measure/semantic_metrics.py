"""One case's semantic numbers: cosine statistics, and clusters by cosine or by an entailment judge.

Clusters come from the judge when the case has `equivalence:` (its judgments looked up, never
asked here), else from the cosine bar; the cosine clustering also says where its bar cut
(`cluster_cosine_min_within`, `cluster_cosine_max_across`), so a user can see whether it fits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stabilitygate.measure.embedder import TextEmbedder
from stabilitygate.measure.meaning import JudgmentLookup, MissingJudgment, cluster_by_judgments, sizes_of
from stabilitygate.measure.semantic import (
    ClusterEdges,
    CosinePair,
    cluster_edges,
    cluster_labels,
    pairwise_stats,
    semantic_entropy,
)
from stabilitygate.metrics import Metrics
from stabilitygate.plain import round_float, round_optional
from stabilitygate.results import ClusterPairs, ShownPair
from stabilitygate.suite.model import ResolvedCase

SHOWN_CHARS = 80  # of each text of a cosine pair in the report


@dataclass(frozen=True)
class SemanticResult:
    metrics: Metrics  # the semantic numbers only: cosines, clusters, where the cosine bar cut
    notes: list[str] = field(default_factory=list)
    cluster_pairs: ClusterPairs | None = None  # where the cosine bar cut
    entailment_error: str | None = None  # why the entailment judge could not answer


def semantic_metrics(
    case: ResolvedCase,
    counts: Mapping[str, int],
    embedder: TextEmbedder | None,
    meaning: JudgmentLookup | None,
) -> SemanticResult:
    """The semantic numbers of docs/design.md §5 for the distinct texts `counts` (in first-appearance order)."""
    distinct = list(counts)
    weights = [counts[t] for t in distinct]
    metrics = Metrics()
    notes: list[str] = []
    pairs: ClusterPairs | None = None
    entailment_error: str | None = None
    sizes: list[int] | None = None
    if embedder is not None:
        vectors = embedder.embed(distinct)
        stats = pairwise_stats(vectors, weights)
        if stats is not None:
            metrics = Metrics(
                cosine_min=round_float(stats.minimum),
                cosine_mean=round_float(stats.mean),
                cosine_std=round_float(stats.std),
            )
        notes.extend(_truncation_notes(counts, embedder))
        if meaning is None:
            labels = cluster_labels(vectors, weights, case.thresholds.cluster_cosine)
            sizes = _sizes(labels, weights)
            edges = cluster_edges(vectors, labels)
            metrics = metrics.joined(_edge_metrics(edges))
            pairs = _cluster_pairs(edges, distinct)
    if meaning is not None:
        try:
            sizes = sizes_of(cluster_by_judgments(counts, meaning), counts)
        except MissingJudgment as missing:
            entailment_error = f"the entailment judge could not answer: {missing}"
    if sizes is not None:
        clusters = Metrics(
            semantic_clusters=len(sizes),
            semantic_agreement=round_optional(max(sizes) / sum(weights)),
            semantic_entropy=round_float(semantic_entropy(sizes)),
        )
        metrics = metrics.joined(clusters)
    return SemanticResult(metrics, notes, pairs, entailment_error)


def _sizes(labels: list[int], weights: list[int]) -> list[int]:
    sizes = [0] * (max(labels) + 1)
    for label, n in zip(labels, weights, strict=True):
        sizes[label] += n
    return sizes


def _edge_metrics(edges: ClusterEdges) -> Metrics:
    within, across = edges.least_within, edges.most_across
    return Metrics(
        cluster_cosine_min_within=None if within is None else round_float(within.cosine),
        cluster_cosine_max_across=None if across is None else round_float(across.cosine),
    )


def _cluster_pairs(edges: ClusterEdges, distinct: list[str]) -> ClusterPairs | None:
    """The two pairs with their texts shortened (the full texts are in `completions`)."""
    within, across = _shown(edges.least_within, distinct), _shown(edges.most_across, distinct)
    return ClusterPairs(within, across) if within or across else None


def _shown(pair: CosinePair | None, distinct: list[str]) -> ShownPair | None:
    if pair is None:
        return None
    return ShownPair(pair.cosine, (_short(distinct[pair.first]), _short(distinct[pair.second])))


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"


def _truncation_notes(counts: Mapping[str, int], embedder: TextEmbedder) -> list[str]:
    limit = embedder.max_word_pieces
    too_long = sum(n for t, n in counts.items() if embedder.word_pieces(t) > limit)
    if not too_long:
        return []
    are = "is" if too_long == 1 else "are"
    noun = "completion" if too_long == 1 else "completions"
    return [
        f"{too_long} {noun} {are} longer than the embedding model's {limit} "
        f"word pieces: their semantic numbers cover only the first {limit}"
    ]
