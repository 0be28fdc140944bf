"""Running the gate for the action: its files and command lines, and the stderr tee."""

from __future__ import annotations

import io
from pathlib import Path

from stabilitygate.github import gate
from stabilitygate.github.inputs import read_inputs


def test_a_shard_writes_under_its_own_folder_and_leaves_the_baseline_to_the_merge(tmp_path: Path) -> None:
    env = {"INPUT_SHARD": "2/3", "INPUT_UPDATE-BASELINE": "true", "INPUT_SAMPLES": "5"}
    files = gate.GateFiles.under(tmp_path, read_inputs(env).shard)
    assert files.report_json == tmp_path / ".stabilitygate" / "shard-2-of-3" / "report.json"
    assert files.embedding_cache == tmp_path / ".stabilitygate" / "embeddings"  # shared by every job
    options = gate.judging_options(read_inputs(env), files)
    assert options["update_baseline"] is False and options["embedding_cache"] == files.embedding_cache

    merge = read_inputs({"INPUT_MERGE": "-odd/report.json", "INPUT_UPDATE-BASELINE": "true"})
    assert gate.judging_options(merge, gate.GateFiles.under(tmp_path))["update_baseline"] is True
    mounted = read_inputs({"INPUT_SUITE": "s.yml"} | {"STABILITYGATE_CACHE_DIR": "/cache"})
    assert gate.judging_options(mounted, files)["embedding_cache"] == "/cache"


def test_tee_passes_writes_through_and_keeps_the_last_lines() -> None:
    sink = io.StringIO()
    tee = gate._Tee(sink, keep=2)
    tee.write("one\ntwo\nthr")
    tee.write("ee\nfour")
    assert sink.getvalue() == "one\ntwo\nthree\nfour"
    assert tee.tail() == ["two", "three", "four"]
