"""What the gate says is true, and says why (docs/design.md §3, "What a run says"): through the real command.

Each test drives `python -m stabilitygate` as a process against a loopback OpenAI server and reads
what a person reads (the console, the comment) beside what the files hold (the report, the baseline):
counts taken from the files, the finding said apart from whether the job fails under `--fail-on`,
probe lines only of what was measured, and the cause of failed samples where they are counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.lifecycle import API_KEY, SAMPLING, Life, ScriptedModel
from tests.support.openai_server import Fault

LABEL, SUM, TEAM, HELLO, STRICT = "Label this ticket.", "What is 12 + 7?", "Which team?", "Say hello.", "Strict?"
SCRIPT = {
    LABEL: [("billing", 1)],
    SUM: [("The answer is 19.", 1)],
    TEAM: [("I cannot say.", 1)],  # never one of the labels: nothing parses
    HELLO: [("Hello!", 1)],
}
CASES = [
    {"id": "label", "prompt": LABEL, "answer": {"choice": ["billing", "bug"]}, "expected": "billing"},
    {"id": "sum", "prompt": SUM, "answer": {"number": True}, "expected": 19},
    {"id": "hello", "prompt": HELLO},
    {"id": "hello-again", "prompt": HELLO, "system": "Be brief."},
]
TEAM_CASE = {"id": "team-choice", "prompt": TEAM, "answer": {"choice": ["red", "blue"]}}
TOP = {"sampling": {**SAMPLING, "baseline_samples": 10}, "embedding": {"enabled": False}}


@pytest.fixture
def life(tmp_path: Path) -> Iterator[Life]:
    with ScriptedModel(SCRIPT, api_key=API_KEY) as model:
        yield Life(tmp_path, tmp_path / "cache", model)


def heading(markdown: bytes) -> str:
    return markdown.decode().splitlines()[1]


def test_the_recorded_count_is_the_count_the_baseline_file_holds(life: Life) -> None:
    suite = life.write_suite([*CASES, TEAM_CASE], **TOP)
    step = life.cli("run", str(suite), "--update-baseline")
    entries = json.loads((life.root / "suite.baseline.json").read_text())["cases"]
    assert sorted(entries) == ["hello", "hello-again", "label", "sum"]  # the file holds 4
    lines = step.stderr.splitlines()
    assert f"stabilitygate: baseline written to {life.root / 'suite.baseline.json'}: 4 cases recorded" in lines
    assert any(line.startswith("stabilitygate: not recorded in the baseline: team-choice, ") for line in lines)
    assert step.code == 1 and "stabilitygate: 1 case not recorded: the job fails" in lines
    assert (step.report["verdict"], step.report["outcome"]) == ("fail", "fail")
    assert step.report["run"]["baseline"]["recorded"] == len(entries)


@pytest.mark.parametrize(
    ("fail_on", "code", "outcome", "emoji"),
    [("regression", 1, "fail", "❌"), ("never", 0, "pass", "⚠️"), ("fail", 0, "pass", "⚠️")],
)
def test_the_finding_and_the_jobs_outcome_are_said_apart(
    life: Life, fail_on: str, code: int, outcome: str, emoji: str
) -> None:
    suite = life.write_suite(CASES, **TOP)
    assert life.cli("run", str(suite), "--update-baseline").code == 0
    life.model.answer({**SCRIPT, LABEL: [("bug", 1)]})  # the label regresses: billing -> bug
    step = life.cli("run", str(suite), "--fail-on", fail_on)
    job = "fails" if code else "passes"
    assert step.code == code
    assert f"stabilitygate: 4 cases, 3 passed, 1 regressed; --fail-on {fail_on}: the job {job}" in step.stderr
    assert (step.report["verdict"], step.report["outcome"], step.report["exit_code"]) == ("fail", outcome, code)
    title = heading(step.markdown_bytes)
    assert title == f"## {emoji} LLM stability: 1 regressed; --fail-on {fail_on}: the job {job} · lifecycle"
    if code == 0:  # the heading says no "fail" while the job passes, but for the setting's own name
        assert not re.search(r"\bfail\b", title.replace(f"--fail-on {fail_on}", "SETTING")) and "❌" not in title
    # The console shows what the model said for the case worth a look, not only the Markdown file.
    assert "  label: regressed: " in step.stderr and "    e.g. (10 of 10 samples): 'bug'" in step.stderr


def test_the_comments_opening_sentence_needs_no_jargon(life: Life) -> None:
    suite = life.write_suite(CASES, **TOP)
    step = life.cli("run", str(suite))
    opening = step.markdown_bytes.decode().split("| Case |", 1)[0]
    assert "4 of 4 cases gave the same text in all 10 samples; of the 2 whose answer is read, 2 gave the same " in (
        opening
    )
    assert "Of the 2 with an expected answer, 2 gave it every time and 2 at least once." in opening
    assert not re.search(r"TAR[ra]", opening)
    assert "TARr@10 1.00 · TARa@10 1.00" in step.markdown_bytes.decode().rsplit("<sub>", 1)[1]  # named in the footer


def test_no_probe_line_for_a_case_none_of_whose_answers_parsed(life: Life) -> None:
    sampling = {**TOP["sampling"], "probe": "concurrency"}
    suite = life.write_suite([CASES[0], TEAM_CASE], **{**TOP, "sampling": sampling})
    step = life.cli("run", str(suite))
    probe = next(c for c in step.report["cases"] if c["id"] == "team-choice")["probe"]
    assert (probe["alone_distinct"], probe["alone_unparsed"], probe["under_load_unparsed"]) == (0, 5, 5)
    blocks = {block.split("</summary>")[0]: block for block in step.markdown_bytes.decode().split("<summary>")[1:]}
    team = next(block for title, block in blocks.items() if "team-choice" in title)
    label = next(block for title, block in blocks.items() if "label" in title)
    assert "Concurrency probe" not in team  # it compared no answer, so it says nothing
    assert "Concurrency probe: 1 distinct answer in 5 alone, 1 in 5 under load" in label  # a case that parsed


def test_a_budget_that_ran_out_says_what_the_requests_failed_with(life: Life) -> None:
    refusal = {"error": {"message": f"Input should be 'text' or 'json_object' ({API_KEY})", "type": "invalid"}}
    life.model.faults = [Fault("status", status=500, prompt=STRICT, body=json.dumps(refusal), retry_after="0")]
    life.model.answer({**SCRIPT, STRICT: [("x", 1)]})
    sampling = {**TOP["sampling"], "max_requests": 14, "retries": 3}
    suite = life.write_suite([CASES[0], {"id": "strict", "prompt": STRICT}], **{**TOP, "sampling": sampling})
    step = life.cli("run", str(suite))
    assert step.code == 3
    said = [line for line in step.stderr.splitlines() if "request budget" in line]
    assert len(said) == 1, step.stderr
    assert said[0].startswith(
        "stabilitygate: the request budget (max_requests) ran out before every sample was drawn; "
    )
    assert "failed, all with: http_500: HTTP 500 from " in said[0]
    assert "Input should be 'text' or 'json_object' (***)" in said[0]  # the provider's message, redacted
    markdown = step.markdown_bytes.decode()
    # In the comment's notes (escaped as Markdown: `_` and `*` are inert there).
    assert "The request budget (max\\_requests) ran out before every sample was drawn; " in markdown
    assert "Input should be 'text' or 'json\\_object' (\\*\\*\\*)" in markdown
    for text in (step.stderr, markdown, json.dumps(step.report)):
        assert API_KEY not in text


def test_a_failing_case_shows_its_cause_in_the_console_and_the_comment(life: Life) -> None:
    life.model.faults = [Fault("status", status=503, prompt=HELLO, body='{"error": {"message": "overloaded"}}')]
    suite = life.write_suite(CASES[2:3], **{**TOP, "sampling": {**TOP["sampling"], "retries": 0}})
    step = life.cli("run", str(suite))
    assert step.code == 3
    case: dict[str, Any] = step.report["cases"][0]
    assert case["verdict"] == "error" and case["sample_errors"] == 10
    cause = "(most common error, 10x: http_503: HTTP 503 from "
    assert cause in step.stderr and "overloaded" in step.stderr  # in the case's reason, said once
    assert "overloaded" in step.markdown_bytes.decode()


def test_a_case_that_passes_with_failed_samples_still_says_why_they_failed(life: Life) -> None:
    suite = life.write_suite(CASES[2:3], **{**TOP, "sampling": {**TOP["sampling"], "retries": 0}})
    assert life.cli("run", str(suite), "--update-baseline").code == 0
    served = life.model.count
    overloaded = Fault("status", status=503, body='{"error": {"message": "overloaded"}}', at={served + 2, served + 5})
    life.model.faults = [overloaded]
    step = life.cli("run", str(suite))
    assert step.code == 0 and step.report["cases"][0]["sample_errors"] == 2
    said = "failed samples of hello (pass): 2 samples failed, all with: http_503: HTTP 503 from "
    assert f"stabilitygate: {said}" in step.stderr and "overloaded" in step.stderr
    assert "Failed samples of hello (pass): 2 samples failed, all with: http\\_503: HTTP 503" in (
        step.markdown_bytes.decode()
    )
