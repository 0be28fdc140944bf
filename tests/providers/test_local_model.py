"""The local provider's model on disk: resolving where it is, cores, and the file digest in its fingerprint."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stabilitygate.providers.interface import FatalProviderError
from stabilitygate.providers.local_model import (
    BUNDLED_FILE,
    ModelSource,
    available_cores,
    file_digest,
    resolve_model_source,
)


def test_bundled_model_is_found_without_importing_its_package() -> None:
    source = resolve_model_source(None)
    assert source.gguf_file == BUNDLED_FILE
    assert source.path.is_file()
    assert source.name == "SmolLM2-135M-Instruct.Q4_1"


def test_a_gguf_path_and_a_model_directory_resolve(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model_source(str(gguf)) == ModelSource(tmp_path.resolve(), "tiny.gguf", "tiny")
    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    assert resolve_model_source(str(model_dir)) == ModelSource(model_dir.resolve(), None, "my-model")


@pytest.mark.parametrize("name", ["missing.gguf", "plain-dir", "notes.txt"])
def test_a_model_that_is_not_there_is_fatal(tmp_path: Path, name: str) -> None:
    (tmp_path / "plain-dir").mkdir()
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(FatalProviderError, match=r"neither a \.gguf file nor a model directory"):
        resolve_model_source(str(tmp_path / name))


def test_available_cores_is_within_the_machine() -> None:
    assert 1 <= available_cores() <= (os.cpu_count() or 1)


def test_file_digest_follows_the_content(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"weights-1")
    first = file_digest(model)
    assert file_digest(model) == first
    model.write_bytes(b"weights-2")
    assert file_digest(model) != first
    directory = tmp_path / "dir"
    directory.mkdir()
    (directory / "config.json").write_text("{}")
    before = file_digest(directory)
    (directory / "model.safetensors").write_bytes(b"x")
    assert file_digest(directory) != before
