from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stabilitygate.errors import BadInput
from stabilitygate.measure.case import measure_case
from stabilitygate.measure.embedder import Embedder, embedding_info, model_files_hash, similarity
from stabilitygate.measure.embedding_cache import EmbeddingCache, model_key

REPO = Path(__file__).resolve().parents[2]

QUEENS = "Richard Feynman was born in Queens, New York, in 1918."
NYC = "Richard Feynman was born in New York City in 1918."
FAR_ROCKAWAY = "Feynman was born in Far Rockaway, a neighbourhood of Queens."
COOKING = "Preheat the oven to 200 degrees and bake the bread for forty minutes."
TEXTS = [QUEENS] * 6 + [NYC] * 3 + [FAR_ROCKAWAY, COOKING]


def test_importing_and_configuring_does_not_load_torch() -> None:
    code = (
        "import sys\n"
        "from stabilitygate.measure.case import measure_case\n"
        "from stabilitygate.measure.embedder import Embedder, embedding_info\n"
        "e = Embedder(cache_dir='')\n"
        "assert e.word_pieces('hello world') == 4 and e.max_word_pieces == 256, embedding_info(e)\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_other_models_must_be_local_directories(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="'sentence-transformers/all-mpnet-base-v2' is not a local directory"):
        Embedder("sentence-transformers/all-mpnet-base-v2")
    assert Embedder(str(tmp_path)).model_path == tmp_path.resolve()
    with pytest.raises(BadInput, match="batch_size"):
        Embedder(batch_size=0)


def test_cached_vectors_are_used_without_loading_the_model(tmp_path: Path) -> None:
    embedder = Embedder(cache_dir=str(tmp_path))
    cache = EmbeddingCache(tmp_path, model_key("all-MiniLM-L6-v2", model_files_hash(embedder.model_path)))
    cache.put("a", np.array([1, 0, 0], dtype=np.float32))
    cache.put("b", np.array([0, 1, 0], dtype=np.float32))
    vectors = embedder.embed(["b", "a", "b"])
    assert vectors.tolist() == [[0, 1, 0], [1, 0, 0], [0, 1, 0]]
    assert embedder.texts_embedded == 0
    assert similarity(embedder, "a", "b") == 0.0
    assert similarity(embedder, "same", "same") == 1.0  # identical texts are not even embedded


def test_word_pieces_take_any_python_string() -> None:
    embedder = Embedder(cache_dir="")
    assert embedder.word_pieces("a\ud800b") == embedder.word_pieces("a?b")  # a lone surrogate from JSON input


def test_embedding_info_without_a_semantic_layer() -> None:
    assert embedding_info(None)["model"] is None


# -- the real model --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uncached() -> Embedder:
    embedder = Embedder(cache_dir="")
    embedder.embed(["warm up"])
    return embedder


@pytest.mark.slow
def test_cosines_equal_a_direct_sentence_transformers_computation(
    uncached: Embedder, make_case: Callable[..., Any], make_samples: Any
) -> None:
    from sentence_transformers import SentenceTransformer

    m = measure_case(make_case(samples=len(TEXTS)), make_samples(TEXTS), embedder=uncached)
    direct = SentenceTransformer(str(uncached.model_path), device="cpu").encode(TEXTS)
    values = []
    for i, j in itertools.combinations(range(len(TEXTS)), 2):
        a, b = direct[i], direct[j]
        values.append(1.0 if TEXTS[i] == TEXTS[j] else float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert m.metrics["cosine_min"] == pytest.approx(min(values), abs=1e-5)
    assert m.metrics["cosine_mean"] == pytest.approx(float(np.mean(values)), abs=1e-5)
    assert m.metrics["cosine_std"] == pytest.approx(float(np.std(values)), abs=1e-5)
    # the paraphrases cluster together, the recipe does not
    assert m.metrics["semantic_clusters"] >= 2
    assert m.metrics["cosine_min"] < 0.3


@pytest.mark.slow
def test_fifty_samples_of_three_texts_embed_three(make_case: Callable[..., Any], make_samples: Any) -> None:
    embedder = Embedder(cache_dir="")
    texts = [QUEENS] * 30 + [NYC] * 15 + [FAR_ROCKAWAY] * 5
    random.Random(3).shuffle(texts)
    measure_case(make_case(samples=50), make_samples(texts), embedder=embedder)
    assert embedder.texts_embedded == 3
    measure_case(make_case(samples=50), make_samples(texts), embedder=embedder)
    assert embedder.texts_embedded == 3  # seen before in this process


@pytest.mark.slow
def test_reports_do_not_depend_on_batch_size_companions_or_order(
    make_case: Callable[..., Any], make_samples: Any
) -> None:
    case = make_case({"regex": "(Queens|New York City)"}, "Queens", samples=len(TEXTS))
    one = Embedder(batch_size=1, cache_dir="")
    many = Embedder(batch_size=32, cache_dir="")
    many.embed([f"companion text number {i} " * (i % 7 + 1) for i in range(40)])  # other texts share batches
    a = measure_case(case, make_samples(TEXTS), embedder=one)
    shuffled = make_samples(TEXTS)
    random.Random(5).shuffle(shuffled)
    b = measure_case(case, shuffled, embedder=many)
    assert a == b
    assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)
    assert np.array_equal(one.embed(TEXTS), many.embed(TEXTS))


@pytest.mark.slow
def test_a_second_embedder_on_the_same_cache_embeds_nothing(
    tmp_path: Path, make_case: Callable[..., Any], make_samples: Any
) -> None:
    case = make_case(samples=len(TEXTS))
    first = Embedder(cache_dir=str(tmp_path))
    a = measure_case(case, make_samples(TEXTS), embedder=first)
    assert first.texts_embedded == 4
    second = Embedder(cache_dir=str(tmp_path))
    b = measure_case(case, make_samples(TEXTS), embedder=second)
    assert second.texts_embedded == 0
    assert a == b
    assert np.array_equal(first.embed(TEXTS), second.embed(TEXTS))
    # The report states the distinct texts, wherever their vectors came from: a warm cache
    # must not change a report.
    assert embedding_info(second) == embedding_info(first)
    assert embedding_info(second)["texts_embedded"] == 4


@pytest.mark.slow
def test_word_pieces_match_the_model_tokenizer_and_long_texts_are_noted(
    uncached: Embedder, make_case: Callable[..., Any], make_samples: Any
) -> None:
    model = uncached._load()
    long_text = "The borough of Queens is large. " * 60
    for text in (QUEENS, long_text, "naïve café — ünïcode"):
        assert uncached.word_pieces(text) == len(model.tokenizer(text, truncation=False)["input_ids"])
    assert uncached.word_pieces(long_text) > 256
    m = measure_case(make_case(samples=3), make_samples([long_text, long_text, QUEENS]), embedder=uncached)
    assert m.notes == [
        "2 completions are longer than the embedding model's 256 word pieces: their semantic numbers cover only "
        "the first 256"
    ]
    assert embedding_info(uncached) == {
        "model": "all-MiniLM-L6-v2",
        "texts_embedded": uncached.texts_embedded,
        "max_word_pieces": 256,
        "truncation": (
            "texts longer than 256 word pieces are truncated: their semantic numbers cover only the first 256"
        ),
    }


@pytest.mark.slow
def test_similarity_orders_paraphrases_above_unrelated_text(uncached: Embedder) -> None:
    close = similarity(uncached, QUEENS, NYC)
    far = similarity(uncached, QUEENS, COOKING)
    assert 0.7 < close < 1.0
    assert far < 0.3
    assert similarity(uncached, NYC, QUEENS) == close
    vectors = uncached.embed([QUEENS, COOKING, "broken \ud800 text"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
