"""The library API: `stabilitygate.run`, `score` and `merge` return a Report and write nothing unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import stabilitygate
from stabilitygate.errors import BadInput
from stabilitygate.pipeline.options import Shard
from stabilitygate.report.json_report import dump_report
from stabilitygate.results import CompletionCount
from stabilitygate.samples import Sample
from tests.pipeline.conftest import write_suite
from tests.support.openai_server import ScriptedOpenAI

SCRIPT = {"q0": [("Queens", 3), ("Brooklyn", 1)], "q1": [("B", 1)]}
CASES = [{"id": "c0", "prompt": "q0"}, {"id": "c1", "prompt": "q1", "answer": {"choice": ["A", "B"]}}]


COUNTS = ("cases", "passed", "failed", "regressed", "new", "errors")


def files_under(directory: Path) -> set[Path]:
    return {p for p in directory.rglob("*") if p.is_file()}


def test_run_returns_a_report_and_writes_nothing(tmp_path: Path) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, CASES, sampling={"samples": 4, "concurrency": 2})
        before = files_under(tmp_path)
        report = stabilitygate.run(suite)
    assert files_under(tmp_path) == before
    assert isinstance(report, stabilitygate.Report)
    assert (report.verdict, report.exit_code) == ("pass", 0)
    assert [c.id for c in report.cases] == ["c0", "c1"]
    c0 = report.case("c0")
    assert c0.verdict == "new" and c0.primary is not None and (c0.primary.k, c0.primary.n) == (3, 4)
    assert c0.measurement.completions[0] == CompletionCount("Queens", 3)
    assert c0.baseline == stabilitygate.NotCompared("no_baseline")
    assert c0.metrics.unique_completions == len(c0.completions) and c0.metrics.mode_share == 0.75
    assert report.run.sampling is not None and report.run.sampling.requests == 8
    assert report.run.baseline.status == "missing" and report.summary.new == 2


def test_what_is_asked_for_is_written(tmp_path: Path) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, CASES, sampling={"samples": 4})
        samples = tmp_path / "out" / "samples.jsonl"
        samples.parent.mkdir()
        report = stabilitygate.run(suite, update_baseline=True, samples_out=samples)
    assert report.run.baseline.status == "updated"
    # Recording a baseline draws baseline_samples: 5 x samples by default.
    assert (tmp_path / "suite.baseline.json").is_file() and len(samples.read_text().splitlines()) == 2 * 5 * 4


def test_score_takes_sample_objects_or_files_and_gives_the_same_report(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", CASES)
    drawn = [Sample("c0", i, t) for i, t in enumerate(["Queens", "Queens", "Brooklyn"])]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(s.to_json()) + "\n" for s in drawn))
    from_objects = stabilitygate.score(drawn, suite=suite)
    from_file = stabilitygate.score([path], suite=suite)
    assert dump_report(from_objects) == dump_report(from_file)
    assert from_objects.case("c0").measurement.samples_ok == 3 and from_objects.run.sampling is None


def test_score_refuses_a_mix_of_samples_and_paths(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", CASES)
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(Sample("c0", 0, "Queens").to_json()) + "\n")
    with pytest.raises(TypeError, match="either Sample objects or paths"):
        stabilitygate.score([Sample("c0", 1, "Queens"), path], suite=suite)
    with pytest.raises(TypeError, match="either Sample objects or paths"):
        stabilitygate.score([42], suite=suite)  # type: ignore[list-item]


def test_report_case_of_an_unknown_id_is_a_key_error(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", CASES)
    report = stabilitygate.score([Sample("c0", i, "Queens") for i in range(3)], suite=suite)
    assert report.case("c0").id == "c0"
    with pytest.raises(KeyError, match="nope"):
        report.case("nope")


def test_the_public_surface_names_what_a_library_user_needs() -> None:
    from stabilitygate.against_baseline import Compared, NotCompared
    from stabilitygate.errors import BadInput, CannotMeasure
    from stabilitygate.metrics import Agreement, Metrics
    from stabilitygate.report.files import ReportFiles
    from stabilitygate.suite.load import LoadedSuite

    exported: dict[str, object] = {
        "BadInput": BadInput,
        "CannotMeasure": CannotMeasure,
        "Sample": Sample,
        "Shard": Shard,
        "LoadedSuite": LoadedSuite,
        "ReportFiles": ReportFiles,
        "Metrics": Metrics,
        "Agreement": Agreement,
        "Compared": Compared,
        "NotCompared": NotCompared,
    }
    for name, value in exported.items():
        assert name in stabilitygate.__all__
        assert getattr(stabilitygate, name) is value
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        stabilitygate.Nope  # noqa: B018


def test_merge_joins_shards_in_process(tmp_path: Path) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, CASES, sampling={"samples": 4})
        paths = []
        for k in (1, 2):
            out = tmp_path / f"shard{k}.jsonl"
            shard = stabilitygate.run(suite, shard=Shard(k, 2), samples_out=out, early_stop=False)
            report_path = tmp_path / f"shard{k}.json"
            report_path.write_text(dump_report(shard))
            paths.append(report_path)
    merged = stabilitygate.merge(paths)
    assert [c.id for c in merged.cases] == ["c0", "c1"]
    assert merged.run.sampling is not None and merged.run.sampling.requests == 8


def test_a_report_reads_back_into_the_same_report(tmp_path: Path) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        report = stabilitygate.run(write_suite(tmp_path, server.base_url, CASES, sampling={"samples": 4}))
    again = stabilitygate.Report.from_dict(json.loads(dump_report(report)))
    assert again.to_dict() == report.to_dict() and dump_report(again) == dump_report(report)


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ([], "the top level"),
        ({"schema_version": 99}, "schema_version"),
        ({"schema_version": 1, "tool": {"name": "x", "version": "1"}, "suite": {"path": "s", "name": "s"},
          "verdict": "maybe", "exit_code": 0, "summary": dict.fromkeys(COUNTS, 0), "cases": [],
          "run": {"baseline": {"path": "b", "status": "missing"}, "fail_on": "never"}}, "verdict"),
    ],
)  # fmt: skip
def test_from_dict_refuses_what_is_not_a_report(data: object, where: str) -> None:
    with pytest.raises(BadInput, match=f"r.json: not a stabilitygate report this version can read: at {where}"):
        stabilitygate.Report.from_dict(data, source="r.json")


def test_importing_the_package_loads_no_pipeline() -> None:
    import subprocess
    import sys

    code = "import sys, stabilitygate; print(any(m.startswith('stabilitygate.pipeline') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
