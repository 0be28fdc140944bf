"""Reports bounded by what their own readers accept (issue 25, item 10): long completions are kept
whole in the samples file only, cut in the report with their length and sha256 beside them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from stabilitygate.bounded import MAX_REPORT_BYTES
from stabilitygate.cli import main
from stabilitygate.metrics import Metrics
from stabilitygate.report.read import read_report
from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount

SUITE = (
    "version: 1\nname: big\nprovider: {type: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
    "sampling: {samples: 8}\nembedding: {enabled: false}\n"
    "cases: [{id: long, prompt: q}, {id: many, prompt: q, answer: {regex: '(\\d+)'}}]\n"
)
MIB = 1024 * 1024
SHOWN, ROWS = 2_000, 100  # the contract (docs/design.md §8): characters of a text, rows of a case


def write_samples(path: Path) -> dict[str, str]:
    """Four distinct completions of 1 MiB, and a case of 150 distinct short ones; the texts by sha256."""
    long = [f"{i} " + "lorem ipsum dolor " * (MIB // 18) for i in range(4)]
    rows = [{"case": "long", "index": i, "text": long[i % 4]} for i in range(8)]
    rows += [{"case": "many", "index": i, "text": f"answer {i}"} for i in range(150)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {hashlib.sha256(t.encode()).hexdigest(): t for t in long}


def test_a_report_of_huge_completions_is_small_and_points_into_the_samples_file(tmp_path: Path) -> None:
    (tmp_path / "suite.yml").write_text(SUITE)
    samples, report = tmp_path / "samples.jsonl", tmp_path / "report.json"
    whole = write_samples(samples)
    code = main(["score", str(samples), "--suite", str(tmp_path / "suite.yml"), "--report-json", str(report)])
    assert code in (0, 1)
    assert report.stat().st_size < 64 * 1024 < samples.stat().st_size  # was 4 MiB: every text whole
    data = json.loads(report.read_text())
    long, many = data["cases"]
    assert long["metrics"]["unique_completions"] == 4 and len(long["completions"]) == 4
    for row in long["completions"]:
        assert len(row["text"]) == SHOWN and row["chars"] == len(whole[row["sha256"]])
        assert whole[row["sha256"]].startswith(row["text"])  # the pointer finds the whole text
    # A case of many distinct completions lists the most frequent; the metrics count them all.
    assert many["metrics"]["unique_completions"] == 150 and len(many["completions"]) == ROWS
    assert len(many["answers"]) == ROWS
    assert read_report(report).cases[0].completions[0].chars == long["completions"][0]["chars"]  # its readers take it


def test_the_share_of_each_text_keeps_every_report_within_its_readers_limit() -> None:
    from stabilitygate.report.bounds import MAX_ROWS, MAX_SHOWN_CHARS, MIN_SHOWN_CHARS, TEXT_BUDGET_CHARS, text_limit

    assert (MAX_SHOWN_CHARS, MAX_ROWS) == (SHOWN, ROWS)

    def measured(rows: int) -> CaseMeasurement:
        texts = tuple(CompletionCount(f"t{i}", 1) for i in range(rows))
        return CaseMeasurement(
            id="c",
            samples_requested=rows,
            samples_ok=rows,
            sample_errors=0,
            metrics=Metrics(),
            completions=texts,
            answers=tuple(AnswerCount(i, 1) for i in range(rows)),
        )

    assert text_limit([measured(3)]) == MAX_SHOWN_CHARS
    # Each character takes at most 6 bytes once JSON-escaped: all the texts, at most half of the limit.
    assert TEXT_BUDGET_CHARS * 6 <= MAX_REPORT_BYTES // 2
    for cases in (1, 10, 100, 1000):
        limit, rows = text_limit([measured(500)] * cases), cases * 2 * MAX_ROWS
        assert MIN_SHOWN_CHARS <= limit <= MAX_SHOWN_CHARS
        assert limit == MIN_SHOWN_CHARS or rows * limit <= TEXT_BUDGET_CHARS
