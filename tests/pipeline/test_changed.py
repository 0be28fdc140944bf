"""`--changed-only`: only new and changed cases are sampled; the rest keep their baseline figures."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from stabilitygate.cases import load_suite
from stabilitygate.cli import main
from stabilitygate.errors import BadInput
from stabilitygate.judge.baseline import read_baseline
from stabilitygate.pipeline.changed import pick_canaries, select_changed
from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import ScriptedOpenAI

N = 4
SCRIPT = {f"q{i}": [(f"answer {i}", 1)] for i in range(20)}


def twenty_cases(changed: str | None = None) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "prompt": f"q{i}" + (" (edited)" if f"c{i}" == changed else "")} for i in range(20)]


def suite_with(tmp_path: Path, server: ScriptedOpenAI, cases: list[dict[str, Any]], **sampling: Any) -> Path:
    sizes = {"samples": N, "baseline_samples": N, "concurrency": 4}
    return write_suite(tmp_path, server.base_url, cases, sampling={**sizes, **sampling})


def record(tmp_path: Path, run_cli: RunCli, server: ScriptedOpenAI, **sampling: Any) -> Path:
    suite = suite_with(tmp_path, server, twenty_cases(), **sampling)
    code, _ = run_cli("run", str(suite), "--no-progress", "--update-baseline")
    assert code == 0
    return suite


def test_one_changed_case_of_twenty_costs_one_twentieth(tmp_path: Path, run_cli: RunCli) -> None:
    with ScriptedOpenAI(SCRIPT, default="edited answer") as server:
        record(tmp_path, run_cli, server)
        full = server.count
        suite = suite_with(tmp_path, server, twenty_cases(changed="c7"))
        code, report = run_cli("run", str(suite), "--no-progress", "--changed-only", "--junit", str(tmp_path / "j.xml"))
        changed_only = server.count - full
    assert full == 20 * N and changed_only == N
    assert code == 0 and report is not None
    verdicts = {c["id"]: c["verdict"] for c in report["cases"]}
    assert verdicts.pop("c7") == "new" and set(verdicts.values()) == {"unchanged"}
    assert [c["id"] for c in report["cases"]] == [f"c{i}" for i in range(20)]  # suite order
    unchanged = report["cases"][0]
    assert unchanged["reasons"] == ["not re-measured: definition unchanged since the baseline"]
    assert unchanged["samples_ok"] == N and unchanged["completions"] == [{"text": "answer 0", "count": N}]
    assert unchanged["baseline"] == {"status": "unchanged", "hash": unchanged["hash"]}
    summary = report["summary"]
    assert (summary["cases"], summary["unchanged"], summary["new"], summary["requests_saved"]) == (20, 19, 1, 19 * N)
    assert summary["tar_raw"] == 1.0  # over every case, the unchanged ones with their baseline figures
    assert report["run"]["changed_only"] is True
    junit = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert junit is not None and junit.get("skipped") == "19" and junit.get("tests") == "20"


def test_unchanged_cases_never_fail_and_update_baseline_touches_only_the_remeasured(
    tmp_path: Path, run_cli: RunCli
) -> None:
    with ScriptedOpenAI(SCRIPT, default=[("x", 1), ("y", 1)]) as server:
        record(tmp_path, run_cli, server)
        baseline_path = tmp_path / "suite.baseline.json"
        before = json.loads(baseline_path.read_text())
        cases = twenty_cases(changed="c3")
        cases[3]["thresholds"] = {"max_unique": 1}  # the edited prompt gets two answers: it fails
        suite = suite_with(tmp_path, server, cases)
        code, report = run_cli("run", str(suite), "--no-progress", "--changed-only")
        assert code == 1 and report is not None
        assert [c["id"] for c in report["cases"] if c["verdict"] != "unchanged"] == ["c3"]
        code, _ = run_cli("run", str(suite), "--no-progress", "--changed-only", "--update-baseline")
    assert code == 0
    after = json.loads(baseline_path.read_text())
    assert after["cases"]["c3"] != before["cases"]["c3"]
    assert {k: v for k, v in after["cases"].items() if k != "c3"} == {
        k: v for k, v in before["cases"].items() if k != "c3"
    }


def test_canaries_are_sampled_too_and_picked_from_the_commit(tmp_path: Path) -> None:
    ids = [f"c{i}" for i in range(20)]
    first = pick_canaries(ids, 3, "abc123")
    assert first == pick_canaries(list(reversed(ids)), 3, "abc123")  # every job of one commit agrees
    assert len(set(first)) == 3 and set(first) <= set(ids)
    picks = {tuple(pick_canaries(ids, 3, f"commit-{k}")) for k in range(10)}
    assert len(picks) > 1  # and they move from commit to commit
    assert pick_canaries(ids, 0, "abc123") == []


def test_canaries_cost_k_more_cases(tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_SHA", "0123abcd")
    with ScriptedOpenAI(SCRIPT, default="edited answer") as server:
        record(tmp_path, run_cli, server, canaries=2)
        full = server.count
        suite = suite_with(tmp_path, server, twenty_cases(changed="c7"), canaries=2)
        code, report = run_cli("run", str(suite), "--no-progress", "--changed-only")
        assert server.count - full == 3 * N
    assert code == 0 and report is not None
    remeasured = sorted(c["id"] for c in report["cases"] if c["verdict"] != "unchanged")
    canaries = pick_canaries([f"c{i}" for i in range(20) if i != 7], 2, "0123abcd")
    assert remeasured == sorted(["c7", *canaries])
    assert report["summary"]["unchanged"] == 17


def test_http_and_command_cases_always_count_as_changed(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    api = {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    suite.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "name": "apps",
                "provider": {"type": "command", "command": ["echo", "hi"]},
                "cases": [{"id": "app", "prompt": "p"}, {"id": "api", "prompt": "p", "provider": api}],
            }
        )
    )
    cases = load_suite(suite).resolved_cases()
    baseline_file = tmp_path / "b.json"
    empty = {"samples": 2, "metrics": {}, "primary": None, "completions": [], "answers": [], "fingerprints": []}
    entries = {c.id: {"hash": c.definition_hash, **empty} for c in cases}
    baseline_file.write_text(json.dumps({"schema_version": 1, "suite": "apps", "cases": entries}))
    selection = select_changed(cases, read_baseline(baseline_file), canaries=0, commit="x")
    assert [c.id for c in selection.sampled] == ["app"]
    assert [c.id for c, _ in selection.unchanged] == ["api"]


@pytest.mark.parametrize("baseline_text", [None, "{not json", '{"schema_version": 99}'])
def test_without_a_readable_baseline_everything_is_sampled_and_the_log_says_why(
    tmp_path: Path, run_cli: RunCli, capsys: pytest.CaptureFixture[str], baseline_text: str | None
) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        suite = suite_with(tmp_path, server, twenty_cases()[:3])
        if baseline_text is not None:
            (tmp_path / "suite.baseline.json").write_text(baseline_text)
        code, report = run_cli("run", str(suite), "--no-progress", "--changed-only")
        assert server.count == 3 * N
    assert code == 0 and report is not None
    assert {c["verdict"] for c in report["cases"]} == {"new"}
    err = capsys.readouterr().err
    why = [line for line in err.splitlines() if line.startswith("stabilitygate: changed-only:")]
    assert len(why) == 1 and why[0].endswith("sampling every case")
    assert ("no baseline" in why[0]) == (baseline_text is None)


@pytest.mark.parametrize("canaries", [-1, 4])
def test_canaries_out_of_range_is_bad_input_at_its_line(tmp_path: Path, run_cli: RunCli, canaries: int) -> None:
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", twenty_cases()[:3], sampling={"canaries": canaries})
    assert main(["validate", str(suite)]) == 2
    line = next(i for i, text in enumerate(suite.read_text().splitlines(), 1) if "canaries" in text)
    with pytest.raises(BadInput) as caught:
        load_suite(suite)
    assert f"{suite}:{line}:" in str(caught.value) and "canaries" in str(caught.value)


def test_shards_balance_over_the_changed_cases_and_the_merge_adds_the_unchanged(
    tmp_path: Path, run_cli: RunCli
) -> None:
    with ScriptedOpenAI(SCRIPT, default="edited answer") as server:
        record(tmp_path, run_cli, server)
        full = server.count
        cases = twenty_cases(changed="c2")
        cases[11]["prompt"] = "q11 (edited)"
        suite = suite_with(tmp_path, server, cases)
        reports = []
        for k in (1, 2):
            path = tmp_path / f"shard{k}.json"
            _, shard = run_cli(
                "run", str(suite), "--no-progress", "--changed-only", "--shard", f"{k}/2",
                "--samples-out", str(tmp_path / f"s{k}.jsonl"), report=path,
            )  # fmt: skip
            assert shard is not None and len(shard["cases"]) == 1  # one changed case each, none unchanged
            reports.append(path)
        assert server.count - full == 2 * N
    code, merged = run_cli("merge", *map(str, reports), report=tmp_path / "merged.json")
    assert code == 0 and merged is not None
    assert len(merged["cases"]) == 20 and merged["summary"]["unchanged"] == 18
    assert {c["id"] for c in merged["cases"] if c["verdict"] == "new"} == {"c2", "c11"}
