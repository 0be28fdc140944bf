from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from stabilitygate.measure import semantic
from stabilitygate.measure.semantic import (
    ClusterEdges,
    CosinePair,
    PairStats,
    cluster_edges,
    cluster_labels,
    pairwise_stats,
    semantic_entropy,
)


def unit(angle_degrees: float) -> list[float]:
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a)]


def cluster_sizes(vectors: np.ndarray, counts: list[int], threshold: float) -> list[int]:
    """The samples in each cluster of `cluster_labels`, in the order the clusters open."""
    labels = cluster_labels(vectors, counts, threshold)
    return [sum(n for label, n in zip(labels, counts, strict=True) if label == k) for k in range(max(labels) + 1)]


def brute_force(vectors: np.ndarray, counts: list[int]) -> tuple[float, float, float]:
    """Expand to samples and loop over every pair i < j."""
    rows = [vectors[k] / np.linalg.norm(vectors[k]) for k, n in enumerate(counts) for _ in range(n)]
    owner = [k for k, n in enumerate(counts) for _ in range(n)]
    values = [
        1.0 if owner[i] == owner[j] else float(np.dot(rows[i], rows[j]))
        for i, j in itertools.combinations(range(len(rows)), 2)
    ]
    return min(values), float(np.mean(values)), float(np.std(values))


def test_pairwise_stats_by_hand() -> None:
    # 3 copies of t0, 1 of t1 at 60 degrees: pairs (0,0) x3 -> 1.0, (0,1) x3 -> 0.5
    stats = pairwise_stats(np.array([unit(0), unit(60)]), [3, 1])
    assert stats is not None
    assert stats.minimum == pytest.approx(0.5)
    assert stats.mean == pytest.approx(0.75)
    assert stats.std == pytest.approx(0.25)


def test_identical_texts_count_one_and_std_zero() -> None:
    assert pairwise_stats(np.array([unit(10)]), [20]) == PairStats(minimum=1.0, mean=1.0, std=0.0)


def test_fewer_than_two_samples_have_no_pairs() -> None:
    assert pairwise_stats(np.array([unit(0)]), [1]) is None
    assert pairwise_stats(np.zeros((0, 2)), []) is None


def test_all_different_texts() -> None:
    stats = pairwise_stats(np.array([unit(0), unit(90), unit(180)]), [1, 1, 1])
    assert stats is not None
    assert stats.minimum == pytest.approx(-1.0)
    assert stats.mean == pytest.approx(-1 / 3)
    assert stats.std == pytest.approx(math.sqrt(2 / 9))


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(4)), elements=st.floats(0.1, 1.0)),
    st.data(),
)
def test_weighted_stats_equal_the_explicit_pair_loop(vectors: np.ndarray, data: st.DataObject) -> None:
    counts = data.draw(st.lists(st.integers(1, 5), min_size=len(vectors), max_size=len(vectors)))
    if sum(counts) < 2:
        return
    stats = pairwise_stats(vectors, counts)
    assert stats is not None
    expected = brute_force(vectors, counts)
    assert (stats.minimum, stats.mean, stats.std) == pytest.approx(expected, abs=1e-9)


def test_block_processing_gives_the_same_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 8))
    counts = list(rng.integers(1, 4, size=40))
    whole = pairwise_stats(vectors, counts)
    monkeypatch.setattr(semantic, "_BLOCK_ELEMENTS", 50)  # a row or so at a time
    blocked = pairwise_stats(vectors, counts)
    assert whole is not None and blocked is not None
    assert (blocked.minimum, blocked.mean, blocked.std) == pytest.approx(
        (whole.minimum, whole.mean, whole.std), abs=1e-12
    )


def test_clusters_join_the_first_cluster_whose_first_member_is_close_enough() -> None:
    # cos(0, 10) = 0.985, cos(0, 25) = 0.906, cos(10, 25) = 0.966
    vectors = np.array([unit(25), unit(0), unit(10)])
    counts = [1, 3, 2]
    # order: unit(0) (3), unit(10) (2), unit(25) (1); 25 is compared with leader 0 only: own cluster
    assert cluster_sizes(vectors, counts, 0.95) == [5, 1]
    assert cluster_sizes(vectors, counts, 0.90) == [6]
    assert cluster_sizes(vectors, counts, 0.99) == [3, 2, 1]


def test_cluster_order_breaks_count_ties_by_first_appearance() -> None:
    # equal counts: the first text leads; unit(30) is within 0.95 of unit(20) but not of unit(0)
    vectors = np.array([unit(0), unit(20), unit(30)])
    assert cluster_sizes(vectors, [2, 2, 1], 0.95) == [2, 3]
    assert cluster_sizes(vectors[[1, 0, 2]], [2, 2, 1], 0.95) == [3, 2]


def test_cluster_threshold_compares_the_rounded_cosine() -> None:
    angle = math.degrees(math.acos(0.95 - 1e-9))  # cosine 0.949999999 reads 0.950000 in the report
    assert cluster_sizes(np.array([unit(0), unit(angle)]), [1, 1], 0.95) == [2]


def test_entropy_in_nats() -> None:
    assert semantic_entropy([10]) == 0.0
    assert semantic_entropy([5, 5]) == pytest.approx(math.log(2))
    assert semantic_entropy([1, 1, 1, 1]) == pytest.approx(math.log(4))
    assert semantic_entropy([8, 2]) == pytest.approx(-(0.8 * math.log(0.8) + 0.2 * math.log(0.2)))
    assert semantic_entropy([]) == 0.0


def brute_force_edges(vectors: np.ndarray, labels: list[int]) -> tuple[float | None, float | None]:
    """The least similar pair inside a cluster and the most similar across, by looping over every pair."""
    rows = [v / np.linalg.norm(v) for v in vectors]
    within, across = [], []
    for i, j in itertools.combinations(range(len(rows)), 2):
        cos = round(float(np.clip(np.dot(rows[i], rows[j]), -1, 1)), 6)
        (within if labels[i] == labels[j] else across).append(cos)
    return (min(within) if within else None), (max(across) if across else None)


def test_cluster_edges_by_hand() -> None:
    # 0 and 10 degrees cluster at 0.95; 30 degrees opens its own cluster, 10-30 is the closest pair across.
    vectors = np.array([unit(0), unit(10), unit(30)])
    labels = cluster_labels(vectors, [5, 3, 2], 0.95)
    assert labels == [0, 0, 1]
    edges = cluster_edges(vectors, labels)
    assert edges.least_within == CosinePair(round(math.cos(math.radians(10)), 6), 0, 1)
    assert edges.most_across == CosinePair(round(math.cos(math.radians(20)), 6), 1, 2)


def test_cluster_edges_are_none_where_no_such_pair_exists() -> None:
    alone = cluster_edges(np.array([unit(0), unit(90)]), [0, 1])
    assert alone.least_within is None
    assert alone.most_across is not None and alone.most_across.cosine == 0.0
    together = cluster_edges(np.array([unit(0), unit(1)]), [0, 0])
    assert together.most_across is None
    assert cluster_edges(np.array([unit(0)]), [0]) == ClusterEdges(None, None)


def test_a_member_may_sit_below_the_bar_from_another_member() -> None:
    # Both join the leader at 0 degrees (cos 17 = 0.956), but they are 34 degrees (0.829) apart:
    # the least similar pair inside the cluster shows what the bar let through.
    vectors = np.array([unit(0), unit(17), unit(-17)])
    labels = cluster_labels(vectors, [3, 1, 1], 0.95)
    assert labels == [0, 0, 0]
    edges = cluster_edges(vectors, labels)
    assert edges.least_within == CosinePair(round(math.cos(math.radians(34)), 6), 1, 2)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 9), st.just(3)), elements=st.floats(-1, 1)).filter(
        lambda a: bool((np.linalg.norm(a, axis=1) > 1e-3).all())
    ),
    st.floats(0.0, 1.0),
)
def test_cluster_edges_equal_the_explicit_pair_loop(vectors: np.ndarray, threshold: float) -> None:
    labels = cluster_labels(vectors, [1] * len(vectors), threshold)
    edges = cluster_edges(vectors, labels)
    within, across = brute_force_edges(vectors, labels)
    assert (edges.least_within.cosine if edges.least_within else None) == within
    assert (edges.most_across.cosine if edges.most_across else None) == across


def test_cluster_edges_in_blocks_give_the_same_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, 4))
    labels = cluster_labels(vectors, [1] * 40, 0.5)
    whole = cluster_edges(vectors, labels)
    monkeypatch.setattr(semantic, "_BLOCK_ELEMENTS", 7)
    assert cluster_edges(vectors, labels) == whole
