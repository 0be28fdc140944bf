"""Builders shared by the measure tests: resolved cases, samples, and a hand-made embedder."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds


def build_case(
    answer: Mapping[str, Any] | None = None,
    expected: Any = None,
    *,
    samples: int = 10,
    min_cosine: float | None = None,
    case_id: str = "c",
) -> ResolvedCase:
    return ResolvedCase(
        id=case_id,
        line=3,
        messages=(Message(role="user", content="Where was Feynman born?"),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(min_cosine=min_cosine),
        answer=AnswerSpec.model_validate(answer) if answer is not None else None,
        expected=expected,
        samples=samples,
    )


def build_samples(texts: Sequence[str | None], **fields: Any) -> list[Sample]:
    """One sample per text (None = a failed sample), indices 0..n-1."""
    return [
        Sample(case="c", index=i, text=t, error=None if t is not None else "http_500: server error", **fields)
        for i, t in enumerate(texts)
    ]


class TableEmbedder:
    """An embedder with hand-chosen vectors, so semantic numbers can be computed by hand."""

    def __init__(self, vectors: Mapping[str, Sequence[float]], *, max_word_pieces: int = 256) -> None:
        self.vectors = {t: np.asarray(v, dtype=np.float32) for t, v in vectors.items()}
        self.calls: list[list[str]] = []
        self._max = max_word_pieces

    @property
    def max_word_pieces(self) -> int:
        return self._max

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = np.stack([self.vectors[t] for t in texts])
        return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)

    def word_pieces(self, text: str) -> int:
        return len(text.split()) + 2


@pytest.fixture
def make_case() -> Callable[..., ResolvedCase]:
    return build_case


@pytest.fixture
def make_samples() -> Callable[..., list[Sample]]:
    return build_samples


@pytest.fixture
def table_embedder() -> type[TableEmbedder]:
    return TableEmbedder
