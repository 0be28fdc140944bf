"""Issue 37, item 4: what the gate writes, it can read back.

Every field a provider's reply or a samples file brings is validated or bounded where it enters, so
that a hostile reply is a failed sample with its cause (never an exit 3, never a report or baseline
that a later `merge` or run refuses) and a hostile file is exit 2 at its line. Each attack goes
through the real command against the loopback OpenAI server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.report.read import read_report
from tests.reliability.test_hostile_files import assert_bad_input, gate, samples_file, suite_file
from tests.support.openai_server import Fault, ScriptedOpenAI


def reply(text: str = "A", **fields: Any) -> str:
    """A chat.completion body with these fields changed (usage, finish_reason, model, ...)."""
    body: dict[str, Any] = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    for key, value in fields.items():
        if key == "finish_reason":
            body["choices"][0]["finish_reason"] = value
        else:
            body[key] = value
    return json.dumps(body)


def live_suite(directory: Path, base_url: str, samples: int = 4) -> Path:
    provider = {"type": "openai", "model": "m", "base_url": base_url}
    sampling = {"samples": samples, "baseline_samples": samples, "retries": 0, "concurrency": 2}
    return suite_file(directory, provider=provider, sampling=sampling)


@pytest.mark.parametrize("count", [10**150, -5], ids=["10**150", "negative"])
def test_a_usage_count_out_of_bounds_is_a_failed_sample_and_the_files_read_back(tmp_path: Path, count: object) -> None:
    """10**150 (or -5) tokens made a report `merge` refuses and a baseline every later run refuses."""
    hostile = reply(usage={"prompt_tokens": count, "completion_tokens": 1})
    with ScriptedOpenAI({}, default="A", faults=[Fault("status", status=200, body=hostile, at={2})]) as server:
        suite = live_suite(tmp_path, server.base_url)
        out = ["--samples-out", str(tmp_path / "s.jsonl"), "--report-json", str(tmp_path / "r.json")]
        recorded = gate("run", str(suite), "--update-baseline", "--no-progress", *out, cwd=tmp_path)
        assert recorded.returncode == 0, recorded.stderr
        again = gate("run", str(suite), "--no-progress", cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr  # the baseline it wrote is read back
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    errors = [sample["error"] for sample in lines if sample["error"]]
    assert len(errors) == 1 and "usage" in errors[0] and "prompt_tokens" in errors[0], errors
    report = read_report(tmp_path / "r.json")  # what `merge` and `comment-from` read
    assert report.cases[0].measurement.sample_errors == 1
    assert report.cases[0].measurement.usage == {"completion_tokens": 3, "prompt_tokens": 3}  # the 3 good ones


def test_finish_reasons_of_a_million_characters_are_cut_where_they_enter(tmp_path: Path) -> None:
    """12 replies whose finish_reason is 1.3 M characters made an 89 MiB report."""
    huge = [reply(finish_reason=f"{i}" + "x" * 1_300_000) for i in range(12)]
    faults = [Fault("status", status=200, body=body, at={i + 1}) for i, body in enumerate(huge)]
    with ScriptedOpenAI({}, default="A", faults=faults) as server:
        suite = live_suite(tmp_path, server.base_url, samples=12)
        report = tmp_path / "r.json"
        done = gate("run", str(suite), "--no-progress", "--report-json", str(report), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    assert report.stat().st_size < 200_000
    reasons = read_report(report).cases[0].measurement.finish_reasons
    assert len(reasons) == 12 and max(len(reason) for reason in reasons) <= 64


def test_a_samples_file_index_past_the_bound_is_exit_2_at_its_line(tmp_path: Path) -> None:
    """`index: 10**99` was accepted by `score`, and the report it wrote was refused by its reader."""
    samples = samples_file(tmp_path, ["x", "y", "x"])
    samples.write_text(samples.read_text() + json.dumps({"case": "a", "index": 10**99, "text": "x"}) + "\n")
    done = gate("score", str(samples), "--suite", str(suite_file(tmp_path)), cwd=tmp_path)
    assert_bad_input(done, "samples.jsonl:4:", "index", "100000")


def test_a_baseline_with_a_suite_name_of_4_mb_is_one_short_line(tmp_path: Path) -> None:
    """The name came back twice in the annotation line: 8 MB."""
    baseline = {"schema_version": 2, "suite": "n" * 4_000_000, "cases": {}}
    (tmp_path / "suite.baseline.json").write_text(json.dumps(baseline))
    done = gate("run", str(suite_file(tmp_path)), "--no-progress", cwd=tmp_path)
    line = assert_bad_input(done, "suite.baseline.json", "suite")
    assert len(line) < 1000


@pytest.mark.parametrize(
    ("field", "value"),
    [("usage", {"prompt_tokens": -5}), ("reply", "r" * 100_000)],
    ids=["negative-usage", "long-reply"],
)
def test_a_judgments_file_holds_the_bounds_of_what_the_judge_replied(tmp_path: Path, field: str, value: object) -> None:
    """The judge's replies are bounded where they enter; a judgments file beside the samples is held to the same."""
    samples = samples_file(tmp_path, ["x", "y", "x"])
    judgment = {"judge": "j", "premise": "0" * 64, "hypothesis": "1" * 64, "case": "a", "label": "entailment",
                "reply": "entailment", "usage": {}, field: value}  # fmt: skip
    (tmp_path / "samples.judgments.jsonl").write_text(json.dumps(judgment) + "\n")
    done = gate("score", str(samples), "--suite", str(suite_file(tmp_path)), cwd=tmp_path)
    assert_bad_input(done, "samples.judgments.jsonl:1:", field)
