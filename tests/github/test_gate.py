"""Running the gate for the action: its files and command lines, and the stderr tee."""

from __future__ import annotations

import io
from pathlib import Path

from stabilitygate.github import gate
from stabilitygate.github.inputs import read_inputs


def test_gate_command_lines_for_a_shard_and_a_merge(tmp_path: Path) -> None:
    env = {"INPUT_SHARD": "2/3", "INPUT_UPDATE-BASELINE": "true", "INPUT_SAMPLES": "5"}
    files = gate.GateFiles.under(tmp_path, read_inputs(env).shard)
    argv = gate.gate_argv(read_inputs(env), files)
    assert files.report_json == tmp_path / ".stabilitygate" / "shard-2-of-3" / "report.json"
    assert argv[0] == "run" and argv[-2:] == ["--", ".stability/suite.yml"]
    assert "--update-baseline" not in argv and argv[argv.index("--shard") + 1] == "2/3"
    assert argv[argv.index("--samples-out") + 1] == str(files.samples)
    assert argv[argv.index("--samples") + 1] == "5"

    merge = read_inputs({"INPUT_MERGE": "-odd/report.json", "INPUT_UPDATE-BASELINE": "true"})
    argv = gate.gate_argv(merge, gate.GateFiles.under(tmp_path), ["-odd/report.json"])
    assert argv[0] == "merge" and argv[-2:] == ["--", "-odd/report.json"]  # never read as a flag
    assert "--update-baseline" in argv and "--samples-out" not in argv
    assert argv[argv.index("--suite") + 1] == ".stability/suite.yml"


def test_tee_passes_writes_through_and_keeps_the_last_lines() -> None:
    sink = io.StringIO()
    tee = gate._Tee(sink, keep=2)
    tee.write("one\ntwo\nthr")
    tee.write("ee\nfour")
    assert sink.getvalue() == "one\ntwo\nthree\nfour"
    assert tee.tail() == ["two", "three", "four"]
