"""`number:` answers through the real command: decimal commas, and answers refused with their reason."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import ScriptedOpenAI
from tests.test_cli import stabilitygate

EUROPEAN, SURD, JSON_ANSWER = "Wie weit?", "Diagonal?", "Count, as JSON."


def test_number_answers_read_and_refuse_as_the_readme_says(tmp_path: Path, run_cli: RunCli) -> None:
    script = {
        # Without decimal_comma "12,345" is twelve thousand: the option is what reads it as 12.345.
        EUROPEAN: [("Die Strecke beträgt 12,345 km.", 6), ("Es sind 12,3450 km.", 4)],
        SURD: [("The diagonal is $\\boxed{4\\sqrt{2}}$.", 7), ("The diagonal is $\\boxed{5.66}$.", 3)],
        JSON_ANSWER: [('{"answer": 42, "confidence": 0.95}', 8), ('{"answer": 42, "confidence": 0.7}', 2)],
    }
    cases = [
        {"id": "european", "prompt": EUROPEAN, "answer": {"number": {"decimal_comma": True}}, "expected": "12,345"},
        {"id": "surd", "prompt": SURD, "answer": {"number": True}},
        {"id": "json", "prompt": JSON_ANSWER, "answer": {"number": True}, "expected": 42},
    ]
    with ScriptedOpenAI(script) as server:
        suite = write_suite(tmp_path, server.base_url, cases)
        code, report = run_cli("run", str(suite), "--no-progress")
    assert code in (0, 1) and report is not None  # the verdicts are the thresholds' business, not the reader's
    european, surd, json_answer = report["cases"]
    assert european["answers"] == [{"answer": 12.345, "count": 10}]
    assert european["metrics"]["accuracy"] == 1.0 and european["metrics"]["parsed_agreement"] == 1.0
    # 7 of 10 refused, with the reason; the 3 that parse agree, so agreement is 3 of 3 parsed answers.
    assert surd["metrics"]["parse_failures"] == 7
    assert surd["answers"] == [{"answer": 5.66, "count": 3}]
    assert any(
        "7 of 10 answers did not parse (first: not one number: \\boxed{4\\sqrt{2}})" in note for note in surd["notes"]
    )
    # The confidence differs between samples; the answer field does not.
    assert json_answer["answers"] == [{"answer": 42, "count": 10}] and json_answer["metrics"]["accuracy"] == 1.0


HUGE = "What is the biggest number you can write?"
# int() refuses past 4,300 digits: before issue 37 this reply made run, score and the Action exit 3.
PAST_ANY_ANSWER = "The answer is 1e" + "9" * 4301


def test_a_reply_past_any_plausible_number_is_a_parse_failure_in_run_and_score(tmp_path: Path) -> None:
    cases = [{"id": "huge", "prompt": HUGE, "answer": {"number": True}, "thresholds": {"min_parsed": 0}}]
    with ScriptedOpenAI({HUGE: [(PAST_ANY_ANSWER, 3), ("The answer is 7.", 7)]}) as server:
        suite = write_suite(tmp_path, server.base_url, cases)
        samples, ran = tmp_path / "samples.jsonl", tmp_path / "run.json"
        files = ["--samples-out", str(samples), "--report-json", str(ran)]
        run = stabilitygate("run", str(suite), "--no-progress", *files)
    scored = tmp_path / "score.json"
    score = stabilitygate("score", str(samples), "--suite", str(suite), "--report-json", str(scored))
    for process, report in ((run, ran), (score, scored)):
        assert process.returncode in (0, 1), process.stderr  # a verdict, not an internal error (3)
        (case,) = json.loads(report.read_text())["cases"]
        assert case["metrics"]["parse_failures"] == 3
        assert case["answers"] == [{"answer": 7, "count": 7}]
        assert any("3 of 10 answers did not parse (first: the number is out of range)" in n for n in case["notes"])
