from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.measure.embedder import Embedder
from stabilitygate.measure.sentence_transformers_backend import model_files_hash, sentence_transformers_dir


def test_other_models_must_be_local_sentence_transformers_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(BadInput, match="'sentence-transformers/all-mpnet-base-v2' is not a local directory"):
        Embedder("sentence-transformers/all-mpnet-base-v2")
    with pytest.raises(BadInput, match="is not a sentence-transformers model directory"):
        Embedder(str(tmp_path))
    (tmp_path / "modules.json").write_text("[]")
    assert sentence_transformers_dir(str(tmp_path)) == tmp_path.resolve()
    assert Embedder(str(tmp_path)).model_path == tmp_path.resolve()
    assert Embedder(str(tmp_path)).backend == "sentence-transformers"
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if it were not installed
    with pytest.raises(BadInput, match=r"needs sentence-transformers, which is not installed: pip install"):
        Embedder(str(tmp_path))


def test_the_model_files_hash_changes_with_any_file_but_not_with_git(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text("[]")
    first = model_files_hash(tmp_path)
    assert len(first) == 64
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main")
    assert model_files_hash(tmp_path) == first  # a checkout's own files are not the model
    (tmp_path / "weights.bin").write_bytes(b"\x00\x01")
    assert model_files_hash(tmp_path) != first
