"""The comment as a reviewer who never saw the tool reads it: rendered by cmark-gfm (GitHub's Markdown),
from a baseline and a pull-request run of a small ticket classifier through the real command."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import cmarkgfm
import pytest
import yaml
from cmarkgfm.cmark import Options

from stabilitygate.cli import main
from tests.support.openai_server import ScriptedOpenAI

EXTENSIONS = ["table", "autolink", "strikethrough", "tasklist"]
CASES = [
    {"id": "billing", "prompt": "T1", "answer": {"json": "/label"}, "expected": "billing",
     "thresholds": {"min_agreement": 0.8}},
    {"id": "crash", "prompt": "T2", "answer": {"json": "/label"}, "expected": "bug"},
    {"id": "letter", "prompt": "T3", "answer": {"choice": ["A", "B"]}},
    {"id": "hours", "prompt": "T4"},
]  # fmt: skip
BASELINE = {
    "T1": [('{"label": "billing"}', 1)],
    "T2": [('{"label": "bug"}', 1)],
    "T3": [("A", 1)],
    "T4": [("The shop opens at nine.", 1)],
}
PULL_REQUEST = {
    "T1": [('{"label": "billing"}', 4), ('{"label": "refund"}', 8)],  # below min_agreement, and regressed
    # Six labels, two samples each: agreement 2/12 against 12/12, p far below 0.001.
    "T2": [(json.dumps({"label": label}), 2) for label in ("bug", "crash", "feature", "other", "refund", "spam")],
    "T3": [("A", 1)],
    "T4": [("The shop opens at nine.", 6), ("We open at 9 am.", 6)],
}


class Cells(HTMLParser):
    """The rendered comment's table rows (as cell texts), its paragraphs and its details blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.text: list[str] = []
        self.details: dict[str, str] = {}
        self._cell: list[str] | None = None
        self._detail: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "details":
            self._detail = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "details" and self._detail is not None:
            block = "".join(self._detail)
            self.details[block.split(":", 1)[0].strip(" ❌📉✅🆕⚠️🛑\n")] = block
            self._detail = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._detail is not None:
            self._detail.append(data)


@pytest.fixture(scope="module")
def comment(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Cells]:
    tmp = tmp_path_factory.mktemp("comment")
    for script, extra in ((BASELINE, ["--update-baseline"]), (PULL_REQUEST, [])):
        with ScriptedOpenAI(script) as server:
            suite = {
                "version": 1,
                "name": "tickets",
                "provider": {"type": "openai", "model": "m", "base_url": server.base_url},
                "sampling": {"samples": 12, "baseline_samples": 12, "retries": 0},
                "cases": CASES,
            }
            (tmp / "suite.yml").write_text(yaml.safe_dump(suite, sort_keys=False))
            main(["run", str(tmp / "suite.yml"), "--no-progress", "--markdown", str(tmp / "comment.md"), *extra])
    markdown = (tmp / "comment.md").read_text()
    html = cmarkgfm.markdown_to_html_with_extensions(markdown, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS)
    cells = Cells()
    cells.feed(html)
    return markdown, cells


def row(cells: Cells, case: str) -> dict[str, str]:
    head = cells.rows[0]
    found = next(r for r in cells.rows[1:] if r[0] == case)
    return dict(zip(head, found, strict=True))


def test_the_headline_says_in_words_what_the_shares_mean(comment: tuple[str, Cells]) -> None:
    markdown, _ = comment
    headline = markdown.split("| Case |", 1)[0]
    assert not re.search(r"TAR[ra]@|accuracy best|worst", headline), headline
    assert "**4 cases**: 1 passed, 1 failed (it also regressed), 2 regressed" in headline
    assert (  # for a reader who knows nothing of TARr or TARa (the footer names them)
        "1 of 4 cases gave the same text in all 12 samples; of the 3 whose answer is read, 1 gave the same "
        "answer each time. Of the 2 with an expected answer, 0 gave it every time and 2 at least once." in headline
    )
    assert "TARr@12 0.25 · TARa@12 0.33 · accuracy best 1.00 / worst 0.00" in markdown.split("---")[-1]  # footer


def test_answers_are_quoted_once(comment: tuple[str, Cells]) -> None:
    markdown, cells = comment
    assert "'\"" not in markdown and "\"'" not in markdown
    assert row(cells, "billing")["Against the baseline"].endswith("answer 'billing' → 'refund'")
    assert "8/12 · 'refund'" in cells.details["billing"]
    assert "answer changed: 'refund' (8/12) where the baseline had 'billing' (12/12)" in cells.details["billing"]


def test_a_p_value_below_a_thousandth_reads_as_one(comment: tuple[str, Cells]) -> None:
    change = row(comment[1], "crash")["Against the baseline"]
    # (the loopback fake's port differs between the two runs: the conditions say so after the p-value)
    assert change.split("; ")[0] == "12/12 → 2/12, p < 0.001", change
    assert "p=" not in comment[0]


def test_the_agreement_column_says_what_it_is_measured_on(comment: tuple[str, Cells]) -> None:
    _, cells = comment
    assert row(cells, "billing")["Agreement"] == "8/12 on /label"
    assert row(cells, "letter")["Agreement"] == "12/12 on the choice"
    assert row(cells, "hours")["Agreement"] == "6/12 on meaning"


def test_a_case_that_fails_a_threshold_and_regressed_shows_both(comment: tuple[str, Cells]) -> None:
    assert row(comment[1], "billing")["Verdict"] == "❌ fail · 📉 regressed"
    assert row(comment[1], "crash")["Verdict"] == "📉 regressed"


def test_a_parsed_case_s_details_leave_out_what_concerns_free_text(comment: tuple[str, Cells]) -> None:
    _, cells = comment
    for parsed in ("billing", "crash"):
        assert "clustering bar" not in cells.details[parsed] and "first disagree at token" not in cells.details[parsed]
    assert "clustering bar" in cells.details["hours"] and "first disagree at token 1" in cells.details["hours"]
