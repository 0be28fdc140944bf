"""A version-1 report or baseline is still read, its renamed keys mapped; what is written is version 2.

The version-1 files are the golden version-2 ones with the keys renamed back by this test's own table,
so that a key the reader forgets to map is a failure here (docs/design.md §8, "Versions").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stabilitygate.cli import main
from stabilitygate.errors import BadInput
from stabilitygate.judge.baseline import read_baseline
from stabilitygate.report.read import read_report
from stabilitygate.typed_json import SCHEMA_VERSION
from tests.pipeline.conftest import write_suite
from tests.report.test_golden_report import GOLDEN, write_inputs
from tests.support.openai_server import ScriptedOpenAI

#: What version 1 called each key version 2 writes.
VERSION_1_NAMES = {
    "p_adjusted": "p_holm",
    "family_size": "holm_family",
    "answer_p_adjusted": "answer_p_holm",
    "meaning_p_adjusted": "meaning_p_holm",
    "parsed_p_adjusted": "parsed_p_holm",
    "entailment_calls": "judge_calls",
    "entailment_prompt_tokens": "judge_prompt_tokens",
    "entailment_completion_tokens": "judge_completion_tokens",
    "entailment_error": "judge_error",
    "entailment_unreadable": "judge_unreadable",
}


def as_version_1(value: object, key: str = "") -> object:
    """A golden file (which has no remedies, whose `p_holm` kept its name) as version 1 wrote it."""
    if isinstance(value, dict):
        renamed = {VERSION_1_NAMES.get(k, k): as_version_1(v, k) for k, v in value.items()}
        if key == "run" and "entailment" in renamed:
            renamed["judge"] = renamed.pop("entailment")
        return {**renamed, "schema_version": 1} if "schema_version" in renamed else renamed
    return [as_version_1(v) for v in value] if isinstance(value, list) else value


def golden(name: str) -> dict[str, object]:
    data = json.loads((GOLDEN / name).read_text())
    assert isinstance(data, dict) and data["schema_version"] == SCHEMA_VERSION == 2
    return data


def write_version_1(path: Path, data: object) -> Path:
    old = as_version_1(data)
    assert old != data and "p_adjusted" not in json.dumps(old)  # the test's own check: something was renamed
    path.write_text(json.dumps(old, indent=2))
    return path


def test_score_against_a_version_1_baseline_writes_the_golden_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_inputs(tmp_path)
    write_version_1(tmp_path / "suite.baseline.json", golden("suite.baseline.json"))
    code = main(["score", "now.jsonl", "--suite", "suite.yml", "--report-json", "now.report.json"])
    assert code == 1  # the golden run regresses
    assert (tmp_path / "now.report.json").read_bytes() == (GOLDEN / "now.report.json").read_bytes()
    assert json.loads((tmp_path / "suite.baseline.json").read_text())["schema_version"] == 1  # never rewritten


def test_merging_a_version_1_shard_report_is_merging_the_version_2_one(tmp_path: Path) -> None:
    shard = tmp_path / "shard"
    shard.mkdir()
    with ScriptedOpenAI({"q1": [("Paris", 3), ("Lyon", 1)]}) as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "c1", "prompt": "q1"}])
        assert main(["run", str(suite), "--no-progress", "--update-baseline"]) == 0
        live = ["run", str(suite), "--no-progress", "--shard", "1/1", "--samples-out", str(shard / "samples.jsonl")]
        main([*live, "--report-json", str(shard / "new.json")])
    new = json.loads((shard / "new.json").read_text())
    assert "p_adjusted" in new["cases"][0]["baseline"]  # compared: the renamed keys are there to map
    write_version_1(shard / "old.json", new)
    outputs = []
    for name in ("old", "new"):
        out, markdown = tmp_path / f"{name}.merged.json", tmp_path / f"{name}.md"
        main(["merge", str(shard / f"{name}.json"), "--report-json", str(out), "--markdown", str(markdown)])
        outputs.append((out.read_text(), markdown.read_text()))
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0][0])["schema_version"] == 2


def test_a_version_1_report_s_entailment_keys_are_mapped(tmp_path: Path) -> None:
    data = golden("now.report.json")
    cases, run = data["cases"], data["run"]
    assert isinstance(cases, list) and isinstance(run, dict)
    cases[0]["metrics"].update(entailment_calls=3, entailment_prompt_tokens=100, entailment_completion_tokens=7)
    cases[0]["diagnostics"]["entailment_error"] = "the entailment judge could not answer: 1 pair"
    run["entailment"] = {"cases": 1, "calls": 3, "prompt_tokens": 100, "completion_tokens": 7}
    report = read_report(write_version_1(tmp_path / "old.report.json", data))
    first = report.cases[0]
    assert (first.metrics.entailment_calls, first.metrics.entailment_completion_tokens) == (3, 7)
    assert first.diagnostics.entailment_error == "the entailment judge could not answer: 1 pair"
    assert report.run.entailment is not None and report.run.entailment.calls == 3
    assert report.schema_version == 2


def test_a_version_1_baseline_reads_as_the_version_2_one(tmp_path: Path) -> None:
    plain = read_baseline(write_version_1(tmp_path / "plain.baseline.json", golden("suite.baseline.json")))
    assert plain is not None and plain == read_baseline(GOLDEN / "suite.baseline.json")
    data = golden("suite.baseline.json")
    cases = data["cases"]
    assert isinstance(cases, dict)
    cases["borough"]["metrics"].update(entailment_calls=4, entailment_prompt_tokens=50, entailment_completion_tokens=2)
    judged = read_baseline(write_version_1(tmp_path / "judged.baseline.json", data))
    assert judged is not None and judged.schema_version == 2
    assert judged.cases["borough"].metrics.entailment_calls == 4


@pytest.mark.parametrize("version", [0, 3, True, "1"])
def test_a_version_this_reader_does_not_know_is_refused(tmp_path: Path, version: object) -> None:
    for name, read in (("now.report.json", read_report), ("suite.baseline.json", read_baseline)):
        path = tmp_path / name
        path.write_text(json.dumps({**golden(name), "schema_version": version}))
        with pytest.raises(BadInput, match="at schema_version"):
            read(path)
