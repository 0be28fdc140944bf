"""`score` and `merge`: reports from samples files, deterministic, and shards that join exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import ScriptedOpenAI

SCRIPT = {
    "q0": [("Queens, New York", 8), ("New York City", 2)],
    "q1": [("Paris", 1)],
    "q2": [("The answer is B.", 6), ("B", 3), ("A", 1)],
    "q3": [("It will rain tomorrow.", 5), ("Tomorrow it is going to rain.", 4), ("Sunny all day.", 1)],
    "q4": [('{"x": 1}', 7), ('{"x": 2}', 3)],
    "q5": [("one", 1), ("two", 1), ("three", 1)],
}
CASES = [
    {"id": "c0", "prompt": "q0"},
    {"id": "c1", "prompt": "q1"},
    {"id": "c2", "prompt": "q2", "answer": {"choice": ["A", "B"]}},
    {"id": "c3", "prompt": "q3"},
    {"id": "c4", "prompt": "q4", "answer": {"json": "/x"}},
    {"id": "c5", "prompt": "q5", "thresholds": {"max_unique": 2}},
]


@pytest.mark.slow
def test_scoring_shuffled_samples_gives_byte_identical_reports(tmp_path: Path, run_cli: RunCli) -> None:
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, CASES, embedding={"enabled": True})
        samples = tmp_path / "samples.jsonl"
        code, _ = run_cli("run", str(suite), "--no-progress", "--samples-out", str(samples), "--no-early-stop")
    assert code in (0, 1)
    lines = samples.read_text().splitlines()
    random.Random(7).shuffle(lines)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(lines) + "\n")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    run_cli("score", str(samples), "--suite", str(suite), report=first)
    run_cli("score", str(shuffled), "--suite", str(suite), report=second)
    assert first.read_bytes() == second.read_bytes()
    report = __import__("json").loads(first.read_text())
    assert report["run"]["embedding"]["model"] == "all-MiniLM-L6-v2"
    assert report["cases"][3]["metrics"]["cosine_min"] is not None


def test_three_shards_merged_equal_the_unsharded_score(tmp_path: Path, run_cli: RunCli) -> None:
    shard_reports = []
    with ScriptedOpenAI(SCRIPT) as server:
        suite = write_suite(tmp_path, server.base_url, CASES)
        for k in (1, 2, 3):
            out = tmp_path / f"shard{k}.jsonl"
            report = tmp_path / f"shard{k}.json"
            _, shard = run_cli(
                "run",
                str(suite),
                "--shard",
                f"{k}/3",
                "--samples-out",
                str(out),
                "--no-progress",
                "--no-early-stop",
                report=report,
            )
            assert shard is not None and len(shard["cases"]) == 2  # balanced: 6 cases of equal cost
            shard_reports.append(report)
    ids = [c["id"] for p in shard_reports for c in __import__("json").loads(p.read_text())["cases"]]
    assert sorted(ids) == [c["id"] for c in CASES]
    union = tmp_path / "all.jsonl"
    union.write_text("".join((tmp_path / f"shard{k}.jsonl").read_text() for k in (1, 2, 3)))
    unsharded, merged = tmp_path / "unsharded.json", tmp_path / "merged.json"
    code_u, _ = run_cli("score", str(union), "--suite", str(suite), report=unsharded)
    code_m, _ = run_cli("merge", *map(str, shard_reports), report=merged)
    assert code_u == code_m == 1  # c5 fails max_unique
    # The same report, plus what only the shards' live runs knew: the whole run's sampling facts.
    merged_report, unsharded_report = (json.loads(p.read_text()) for p in (merged, unsharded))
    sampling = merged_report["run"].pop("sampling")
    assert merged_report == unsharded_report
    assert sampling["requests"] == 60 and sampling["shard"] is None and sampling["early_stopped"] == {}


def test_early_stop_saves_requests_and_keeps_the_verdict(tmp_path: Path, run_cli: RunCli) -> None:
    script = {"vary": [(f"answer {i}", 1) for i in range(20)], "steady": [("same", 1)]}
    cases = [
        {"id": "vary", "prompt": "vary", "thresholds": {"max_unique": 2}},
        {"id": "steady", "prompt": "steady"},
    ]
    results = {}
    for flag in ("--early-stop", "--no-early-stop"):
        with ScriptedOpenAI(script) as server:
            suite = write_suite(tmp_path, server.base_url, cases, sampling={"samples": 20, "concurrency": 2})
            code, report = run_cli("run", str(suite), "--no-progress", flag)
            assert report is not None
            results[flag] = (code, server.count, {c["id"]: c["verdict"] for c in report["cases"]}, report)
    stopped, full = results["--early-stop"], results["--no-early-stop"]
    assert stopped[0] == full[0] == 1
    assert stopped[2] == full[2] == {"vary": "fail", "steady": "new"}
    assert full[1] == 40 and stopped[1] <= 26  # vary stops after 3 distinct answers (+ requests in flight)
    assert "vary" in stopped[3]["run"]["sampling"]["early_stopped"]
    assert any("stopped early" in n for n in stopped[3]["cases"][0]["notes"])


@pytest.mark.slow
def test_fifty_samples_of_three_texts_report_three_embedded(tmp_path: Path, run_cli: RunCli) -> None:
    import json

    texts = ["Queens, New York"] * 30 + ["New York City"] * 15 + ["Far Rockaway"] * 5
    random.Random(5).shuffle(texts)
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({"case": "c", "index": i, "text": t}) + "\n" for i, t in enumerate(texts)))
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", [{"id": "c", "prompt": "q"}], embedding={"enabled": True})
    for _ in range(2):  # the second time from the embedding cache: the report must not change
        code, report = run_cli("score", str(samples), "--suite", str(suite))
        assert code == 0 and report is not None
        assert report["run"]["embedding"]["texts_embedded"] == 3
        assert report["cases"][0]["samples_ok"] == 50 and report["cases"][0]["metrics"]["unique_completions"] == 3


def test_merge_keeps_the_sampling_facts_of_every_shard(tmp_path: Path, run_cli: RunCli) -> None:
    """Two shards with early stop on (the default): the merged report still has the run's requests and stops."""
    script = {"vary": [(f"answer {i}", 1) for i in range(20)], "steady": [("same", 1)]}
    cases = [
        {"id": "vary", "prompt": "vary", "thresholds": {"max_unique": 2}},
        {"id": "steady", "prompt": "steady"},
    ]
    reports, facts = [], []
    with ScriptedOpenAI(script) as server:
        suite = write_suite(tmp_path, server.base_url, cases, sampling={"samples": 20, "concurrency": 2})
        for k in (1, 2):
            report = tmp_path / f"shard{k}.json"
            _, shard = run_cli(
                "run",
                str(suite),
                "--shard",
                f"{k}/2",
                "--samples-out",
                str(tmp_path / f"s{k}.jsonl"),
                "--no-progress",
                report=report,
            )
            assert shard is not None
            facts.append(shard["run"]["sampling"])
            reports.append(report)
        requests_made = server.count
    code, merged = run_cli("merge", *map(str, reports), report=tmp_path / "merged.json")
    assert code == 1 and merged is not None
    sampling = merged["run"]["sampling"]
    assert sampling["requests"] == sum(f["requests"] for f in facts) == requests_made
    assert sampling["retries"] == 0
    assert set(sampling["early_stopped"]) == {"vary"}
    assert sampling["interrupted"] is False and sampling["fatal_error"] is None
    assert sampling["shard"] is None


def one_shard(artifact: Path, run_cli: RunCli) -> tuple[Path, Path]:
    """The report and samples file of a one-shard run of one case, in `artifact` (the suite beside it)."""
    artifact.mkdir()
    report, samples = artifact / "report.json", artifact / "samples.jsonl"
    with ScriptedOpenAI({"q1": [("Paris", 1)]}) as server:
        suite = write_suite(artifact.parent, server.base_url, [{"id": "c1", "prompt": "q1"}])
        code, _ = run_cli(
            "run", str(suite), "--no-progress", "--shard", "1/1", "--samples-out", str(samples), report=report
        )
    assert code == 0
    return report, samples


@pytest.mark.parametrize("named", ["absolute", "../outside/secret.jsonl"])
def test_merge_reads_a_shards_samples_only_beside_its_report(tmp_path: Path, run_cli: RunCli, named: str) -> None:
    """A shard report may come from a fork's job: the samples file it names is looked for beside the
    report, by its name, and nowhere else (issue 25, item 4)."""
    artifact = tmp_path / "artifact"
    report, samples = one_shard(artifact, run_cli)
    outside = tmp_path / "outside" / "secret.jsonl"
    outside.parent.mkdir()
    outside.write_text(
        "".join(json.dumps({"case": "c1", "index": i, "text": "SECRET-FROM-OUTSIDE"}) + "\n" for i in range(10))
    )
    data = json.loads(report.read_text())
    data["run"]["sampling"]["samples_file"] = str(outside) if named == "absolute" else named
    report.write_text(json.dumps(data))
    samples.unlink()
    code, merged = run_cli("merge", str(report), report=tmp_path / "merged.json")
    assert code == 2 and merged is None
    # The file of that name beside the report is the one read.
    samples.write_text(outside.read_text().replace("SECRET-FROM-OUTSIDE", "Paris"))
    (artifact / "secret.jsonl").write_text(samples.read_text())
    code, merged = run_cli("merge", str(report), report=tmp_path / "merged.json")
    assert code == 0 and merged is not None
    assert "SECRET" not in json.dumps(merged) and merged["cases"][0]["completions"] == [{"text": "Paris", "count": 10}]


@pytest.mark.parametrize("linked", ["samples.jsonl", "samples.judgments.jsonl"])
def test_merge_refuses_a_link_for_every_file_beside_a_shard(tmp_path: Path, run_cli: RunCli, linked: str) -> None:
    """Issue 37, item 5: the samples file was guarded, its judgments file was followed out of the artifact."""
    artifact, outside = tmp_path / "artifact", tmp_path / "outside"
    outside.mkdir()
    report, samples = one_shard(artifact, run_cli)
    judgment = {"judge": "j", "premise": "0" * 64, "hypothesis": "1" * 64, "case": "c1", "label": "neutral",
                "reply": "neutral", "usage": {}}  # fmt: skip
    (outside / "samples.judgments.jsonl").write_text(json.dumps(judgment) + "\n")
    (outside / "samples.jsonl").write_text(samples.read_text())
    (artifact / linked).unlink(missing_ok=True)
    (artifact / linked).symlink_to(outside / linked)
    code, merged = run_cli("merge", str(report), report=tmp_path / "merged.json")
    assert code == 2 and merged is None
    (artifact / linked).unlink()
    (artifact / linked).write_text((outside / linked).read_text())  # the same file, not through a link
    code, merged = run_cli("merge", str(report), report=tmp_path / "merged.json")
    assert code == 0 and merged is not None
