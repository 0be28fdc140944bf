"""The semantic numbers: pairwise cosine statistics, clusters, discrete semantic entropy (docs/design.md).

Inputs are the embeddings of the DISTINCT texts and their multiplicities. The S(S-1)/2 sample pairs are
never materialised: a pair of copies of one text counts 1.0, a pair of different texts i, j counts
cos(e_i, e_j) with weight n_i * n_j. Rows are processed in blocks so memory stays bounded even when every
sample is different.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stabilitygate.plain import REPORT_DECIMALS

_BLOCK_ELEMENTS = 2_000_000  # similarity entries computed at once (16 MB of float64)


@dataclass(frozen=True)
class PairStats:
    minimum: float
    mean: float
    std: float  # population standard deviation


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """float64 copies of the rows scaled to length 1, so a dot product is the cosine."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = rows / norms
    return unit


def pairwise_stats(vectors: np.ndarray, counts: Sequence[int]) -> PairStats | None:
    """Min, mean and population std of the cosine over all sample pairs i < j; None when S < 2."""
    weights = np.asarray(counts, dtype=np.float64)
    total = float(weights.sum())
    if total < 2:
        return None
    pairs = total * (total - 1) / 2
    rows = unit_rows(vectors)
    n = rows.shape[0]
    same_pairs = float((weights * (weights - 1) / 2).sum())  # copies of one text: cosine 1.0, distance 0
    minimum = 1.0 if same_pairs > 0 else math.inf
    # Sums of the distance d = 1 - cos (small numbers, so the variance does not cancel catastrophically).
    sum_d = 0.0
    sum_d2 = 0.0
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    columns = np.arange(n)
    for start in range(0, n - 1, block):
        stop = min(start + block, n - 1)
        sims = np.clip(rows[start:stop] @ rows.T, -1.0, 1.0)
        upper = columns[None, :] > np.arange(start, stop)[:, None]
        w = np.where(upper, weights[start:stop, None] * weights[None, :], 0.0)
        d = 1.0 - sims
        sum_d += float((w * d).sum())
        sum_d2 += float((w * d * d).sum())
        if upper.any():
            minimum = min(minimum, float(sims[upper].min()))
    mean_d = sum_d / pairs
    variance = max(sum_d2 / pairs - mean_d * mean_d, 0.0)
    return PairStats(minimum=minimum, mean=1.0 - mean_d, std=math.sqrt(variance))


def cluster_labels(vectors: np.ndarray, counts: Sequence[int], threshold: float) -> list[int]:
    """Greedy clustering of the distinct texts (given in order of first appearance): each one's cluster.

    Texts are taken by count (desc) then first appearance; each joins the first cluster whose first member
    has cosine >= threshold (the cosine rounded as reports round it), else opens a new one. Clusters are
    numbered in the order they open.
    """
    rows = unit_rows(vectors)
    order = sorted(range(len(counts)), key=lambda i: (-counts[i], i))
    leaders = np.empty_like(rows)
    opened = 0
    labels = [0] * len(counts)
    for i in order:
        if opened:
            sims = np.round(leaders[:opened] @ rows[i], REPORT_DECIMALS)
            joined = np.flatnonzero(sims >= threshold)
            if joined.size:
                labels[i] = int(joined[0])
                continue
        leaders[opened] = rows[i]
        labels[i] = opened
        opened += 1
    return labels


@dataclass(frozen=True)
class CosinePair:
    """Two distinct texts (their indices) and the cosine between them."""

    cosine: float
    first: int
    second: int


@dataclass(frozen=True)
class ClusterEdges:
    """Where the clustering bar cut: the least similar pair inside a cluster, the most similar across two.

    Either is None when it does not exist (no cluster with two distinct texts; a single cluster).
    """

    least_within: CosinePair | None
    most_across: CosinePair | None


def cluster_edges(vectors: np.ndarray, labels: Sequence[int]) -> ClusterEdges:
    """The extreme pairs of distinct texts over every pair i < j, in row blocks like `pairwise_stats`."""
    rows = unit_rows(vectors)
    n = rows.shape[0]
    owner = np.asarray(labels)
    columns = np.arange(n)
    least: CosinePair | None = None
    most: CosinePair | None = None
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, n - 1, block):
        stop = min(start + block, n - 1)
        sims = np.round(np.clip(rows[start:stop] @ rows.T, -1.0, 1.0), REPORT_DECIMALS)
        upper = columns[None, :] > np.arange(start, stop)[:, None]
        same = owner[start:stop, None] == owner[None, :]
        least = _extreme(np.where(upper & same, sims, np.inf), start, least, lowest=True)
        most = _extreme(np.where(upper & ~same, sims, -np.inf), start, most, lowest=False)
    return ClusterEdges(least, most)


def _extreme(masked: np.ndarray, start: int, best: CosinePair | None, *, lowest: bool) -> CosinePair | None:
    """The block's extreme entry if it beats `best` (the first one found wins ties: blocks go in order)."""
    flat = int(np.argmin(masked) if lowest else np.argmax(masked))
    value = float(masked.flat[flat])
    if not math.isfinite(value):
        return best
    if best is not None and (value >= best.cosine if lowest else value <= best.cosine):
        return best
    row, column = divmod(flat, masked.shape[1])
    return CosinePair(value, start + row, column)


def semantic_entropy(sizes: Sequence[int]) -> float:
    """-sum (n_c/S) ln(n_c/S) in nats; 0.0 for one cluster."""
    total = sum(sizes)
    if total == 0:
        return 0.0
    return -math.fsum((n / total) * math.log(n / total) for n in sizes if n) + 0.0
