"""Checking shard reports before a merge: every shard once, one sharding, the suite the merge job names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.github.shards import merge_problem


def shard_report(path: Path, shard: str | None, suite: str = "sharded") -> str:
    """A valid report of one shard (or of a whole run: `shard` None) with no cases."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sampling = {"requests": 0, "retries": 0, "interrupted": False, "budget_exhausted": False, "shard": shard}
    report = {
        "schema_version": 1,
        "tool": {"name": "llm-stability-gate", "version": "0.1.0"},
        "suite": {"path": ".stability/suite.yml", "name": suite},
        "verdict": "pass",
        "exit_code": 0,
        "summary": {k: 0 for k in ("cases", "passed", "failed", "regressed", "new", "errors")},
        "run": {"baseline": {"path": "b.json", "status": "missing"}, "fail_on": "regression", "sampling": sampling},
        "cases": [],
    }
    path.write_text(json.dumps(report), encoding="utf-8")
    return str(path)


def test_merge_problem_accepts_every_shard_once(tmp_path: Path) -> None:
    paths = [shard_report(tmp_path / f"{k}.json", f"{k}/3") for k in (3, 1, 2)]
    assert merge_problem(paths, "sharded") is None


@pytest.mark.parametrize(
    ("shards", "suite", "kind", "words"),
    [
        (["1/2"], "sharded", CannotMeasure, "no report of shard 2/2"),
        (["1/2", "2/2", "2/2"], "sharded", BadInput, "shard 2/2 has 2 reports"),
        (["1/2", "2/2", "1/3"], "sharded", BadInput, "different shardings (1/2, 2/2, 1/3)"),
        (["1/1", None], "sharded", BadInput, "the report of a whole run, not of a shard"),
        (["1/1"], "another", BadInput, "reports on suite 'another', but input `suite` is 'sharded'"),
    ],
)
def test_merge_problem_names_what_is_wrong(
    tmp_path: Path, shards: list[str | None], suite: str, kind: type[Exception], words: str
) -> None:
    paths = [shard_report(tmp_path / f"{i}.json", s, suite) for i, s in enumerate(shards)]
    problem = merge_problem(paths, "sharded")
    assert type(problem) is kind and words in str(problem)
