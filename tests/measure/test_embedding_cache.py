from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.measure.embedding_cache import (
    ENV_VAR,
    EmbeddingCache,
    default_cache_dir,
    model_key,
    resolve_cache_dir,
    text_key,
)

WRITER = textwrap.dedent(
    """
    import hashlib, sys
    import numpy as np
    from stabilitygate.measure.embedding_cache import EmbeddingCache

    def vector(text):
        seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        return np.random.default_rng(seed).normal(size=384).astype(np.float32)

    cache = EmbeddingCache(sys.argv[1], "model-abc")
    start, stop = int(sys.argv[2]), int(sys.argv[3])
    for round_ in range(3):  # rewrite the same entries while the other process does too
        for i in range(start, stop):
            cache.put(f"text {i}", vector(f"text {i}"))
            # Written before (this round or an earlier one): must read back whole, never half-written.
            j = start + (i * 7) % (i - start + 1) if round_ == 0 else start + (i * 7) % (stop - start)
            got = cache.get(f"text {j}")
            if got is None or not np.array_equal(got, vector(f"text {j}")):
                sys.exit(f"entry {j} read back missing or corrupt")
    """
)


def expected_vector(text: str) -> np.ndarray:
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(seed).normal(size=384).astype(np.float32)


def test_round_trip_is_exact(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "m-1")
    vector = np.random.default_rng(0).normal(size=384).astype(np.float32)
    assert cache.get("hello") is None
    cache.put("hello", vector)
    got = cache.get("hello")
    assert got is not None and got.dtype == np.float32 and np.array_equal(got, vector)
    assert cache.get_many(["hello", "other"]).keys() == {"hello"}


def test_entries_live_under_the_model_key_and_the_text_hash(tmp_path: Path) -> None:
    EmbeddingCache(tmp_path, "m-1").put("Queens", np.ones(3, dtype=np.float32))
    key = hashlib.sha256(b"Queens").hexdigest()
    assert text_key("Queens") == key
    assert (tmp_path / "m-1" / key[:2] / f"{key}.f32").stat().st_size == 12 + 12
    assert EmbeddingCache(tmp_path, "m-2").get("Queens") is None  # another model never reads it


def test_model_key_is_a_safe_directory_name_that_changes_with_the_files() -> None:
    assert model_key("all-MiniLM-L6-v2", "ab" * 32) == "all-MiniLM-L6-v2-" + "ab" * 8
    assert model_key("/models/my model/", "cd" * 32) == "my_model-" + "cd" * 8
    assert model_key("x", "1" * 64) != model_key("x", "2" * 64)


def test_has_entries_tells_an_empty_cache_from_a_used_one(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "root", "m-1")
    assert not cache.has_entries()  # no directory at all
    (tmp_path / "root" / "m-1").mkdir(parents=True)
    assert not cache.has_entries()  # a directory, no entry
    cache.put("a", np.ones(3, dtype=np.float32))
    assert cache.has_entries()
    assert not EmbeddingCache(tmp_path / "root", "m-2").has_entries()  # another model's entries do not count


def test_damaged_files_are_never_trusted_and_warned_about_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = EmbeddingCache(tmp_path, "m")
    cache.put("a", np.ones(4, dtype=np.float32))
    cache.put("b", np.zeros(4, dtype=np.float32))
    path = next(p for p in (tmp_path / "m").rglob("*.f32") if p.stem == text_key("a"))
    good = path.read_bytes()
    flipped = bytearray(good)
    flipped[-1] ^= 0x01  # one garbled bit of the vector: the right size, the wrong numbers
    other = next(p for p in (tmp_path / "m").rglob("*.f32") if p.stem == text_key("b")).read_bytes()
    nan = good[:12] + np.full(4, np.nan, "<f4").tobytes()
    with caplog.at_level(logging.WARNING, logger="stabilitygate"):
        for blob in (b"", b"SGE2", good[:-1], b"XXXX" + good[4:], bytes(flipped), other, nan):
            path.write_bytes(blob)
            assert cache.get("a") is None
    damaged = [r for r in caplog.records if "is damaged" in r.getMessage()]
    assert len(damaged) == 1 and "re-embedded" in damaged[0].getMessage()


def test_an_entry_of_the_older_format_is_a_silent_miss(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = EmbeddingCache(tmp_path, "m")
    cache.put("a", np.ones(4, dtype=np.float32))
    path = next((tmp_path / "m").rglob("*.f32"))
    path.write_bytes(b"SGE1" + (4).to_bytes(4, "little") + np.ones(4, "<f4").tobytes())
    with caplog.at_level(logging.WARNING, logger="stabilitygate"):
        assert cache.get("a") is None
    assert not caplog.records


def test_an_unwritable_cache_warns_and_never_fails(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = EmbeddingCache(blocker, "m")
    cache.put("a", np.ones(2, dtype=np.float32))
    cache.put("b", np.ones(2, dtype=np.float32))
    assert cache.get("a") is None
    assert len([r for r in caplog.records if "not writable" in r.getMessage()]) == 1


def test_cache_dir_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert default_cache_dir() == Path.home() / ".cache" / "stabilitygate" / "embeddings"
    assert resolve_cache_dir(None) == default_cache_dir()
    assert resolve_cache_dir("") is None
    assert resolve_cache_dir("off") is None
    assert resolve_cache_dir(str(tmp_path)) == tmp_path
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "ci"))
    assert resolve_cache_dir(None) == tmp_path / "ci"
    monkeypatch.setenv(ENV_VAR, "off")
    assert resolve_cache_dir(None) is None


def test_two_processes_writing_at_once_do_not_corrupt_it(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # Overlapping ranges: both processes write entries 100..199.
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(a), str(b)], env=env)
        for a, b in ((0, 200), (100, 300))
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    cache = EmbeddingCache(tmp_path, "model-abc")
    for i in range(300):
        got = cache.get(f"text {i}")
        assert got is not None and np.array_equal(got, expected_vector(f"text {i}")), i
    files = list((tmp_path / "model-abc").rglob("*"))
    assert not [f for f in files if f.name.startswith(".tmp-")]
    assert len([f for f in files if f.suffix == ".f32"]) == 300
