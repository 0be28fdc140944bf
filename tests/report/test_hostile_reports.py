"""A report read back is checked before anything renders it: a hostile value is bad input, never a crash.

A report handed to `merge` or `comment-from` is input (a fork writes every byte of it). Whatever one
value is changed to, reading it either raises BadInput (exit 2, one line naming the place), or gives
a Report that every renderer renders: never a crash (exit 3) in the Markdown, the JUnit XML or the log.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.cli import main
from stabilitygate.errors import BadInput
from stabilitygate.report.console import summary_lines
from stabilitygate.report.junit import render_junit
from stabilitygate.report.markdown import render_markdown
from stabilitygate.report.model import Report
from tests.support.hostile import HOSTILE, leaves, set_at

GOLDEN = Path(__file__).parent / "golden" / "now.report.json"


def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


HOSTILE_NUMBERS = [
    (("summary", "tar_raw"), "abc"),
    (("summary", "best_possible_accuracy"), 7),
    (("summary", "prompt_tokens"), -1),
    (("cases", 0, "metrics", "cosine_min"), "abc"),
    (("cases", 0, "metrics", "unique_completions"), 1.5),
    (("cases", 0, "baseline", "p_adjusted"), "0.01"),
    (("cases", 0, "baseline", "baseline_k"), "10"),
    (("cases", 0, "baseline", "modal_cosine"), []),
    (("cases", 0, "baseline", "metrics", "mode_share"), "x"),
    (("run", "embedding"), {"model": "m", "texts_embedded": "many", "max_word_pieces": 256, "truncation": ""}),
]


@pytest.mark.parametrize(("path", "value"), HOSTILE_NUMBERS, ids=["/".join(map(str, p)) for p, _ in HOSTILE_NUMBERS])
def test_a_hostile_number_is_bad_input_naming_where(path: tuple[str | int, ...], value: Any) -> None:
    where = re.escape("/".join(map(str, path)))
    with pytest.raises(BadInput, match=rf"not a stabilitygate report this version can read: at {where}"):
        Report.from_dict(set_at(golden(), path, value), source="report.json")


@pytest.mark.parametrize("value", [{"nested": True}, "abc", [1, 2]])
def test_an_unknown_metric_is_ignored_and_a_hostile_known_one_refused(value: Any) -> None:
    """A newer metric never breaks an older reader; a metric this version knows is still checked."""
    newer = Report.from_dict(set_at(golden(), ("cases", 0, "metrics", "a_future_metric"), value))
    assert newer.cases[0].metrics == Report.from_dict(golden()).cases[0].metrics
    assert "a_future_metric" not in json.dumps(newer.to_dict())
    with pytest.raises(BadInput, match=r"at cases/0/metrics/semantic_entropy"):
        Report.from_dict(set_at(golden(), ("cases", 0, "metrics", "semantic_entropy"), value))


def test_the_golden_report_renders_and_a_newer_scalar_metric_is_allowed() -> None:
    newer = set_at(golden(), ("cases", 0, "metrics", "a_future_metric"), 0.5)
    assert render_markdown(Report.from_dict(newer)).startswith("<!-- stabilitygate:golden -->")


def test_merge_of_a_hostile_report_exits_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps(set_at(golden(), ("summary", "tar_raw"), "abc")), encoding="utf-8")
    code = main(["merge", str(bad), "--suite", str(tmp_path / "missing.yml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "summary/tar_raw" in err[0] and "Traceback" not in err[0]


def render_everything(report: Report) -> None:
    assert render_markdown(report)
    assert render_junit(report)
    assert summary_lines(report)


@pytest.mark.parametrize("hostile", HOSTILE, ids=repr)
def test_any_value_made_hostile_is_bad_input_or_renders(hostile: Any) -> None:
    document = golden()
    refused = 0
    for path in leaves(document):
        try:
            report = Report.from_dict(set_at(document, path, hostile), source="r.json")
        except BadInput as exc:
            refused += 1
            assert str(exc).startswith("r.json: not a stabilitygate report this version can read: at ")
            assert "\n" not in str(exc)
            continue
        render_everything(report)
    assert refused > 0  # the reader refuses what the renderers could not format


def with_remedies(document: dict[str, Any]) -> dict[str, Any]:
    """The golden report with a case's remedies filled in (docs/design.md §16), as a live run writes them."""
    case = document["cases"][0]
    document["run"]["conditions"] = {
        "cases": {case["id"]: {"provider": "openai", "host": "h:1", "concurrency": 8, "params": {"seed": 1},
                               "fingerprints": ["fp"], "idempotency": "shared", "probe": "concurrency"}},
        "differ": {case["id"]: ["baseline drawn at concurrency 1, this run at 8"]},
        "advice": {case["id"]: "Re-run at concurrency 1."},
    }  # fmt: skip
    case["probe"] = {"compared": "answers", "alone": 5, "under_load": 5, "alone_distinct": 1,
                     "under_load_distinct": 3, "modal_alone": 5, "modal_under_load": 1, "p_value": 0.02,
                     "p_holm": 0.04, "depends": True}  # fmt: skip
    case["variants"] = [{"name": "strict", "overrides": ["params"], "samples_requested": 10, "samples_ok": 10,
                         "sample_errors": 0, "unique_completions": 1, "answers": 1, "parsed_agreement": 1.0,
                         "semantic_agreement": 0.9, "tokens": 99, "primary": {"metric": "parsed_agreement", "k": 10,
                         "n": 10}, "p_value": 0.01, "p_holm": 0.02, "significant": True, "change": "better",
                         "error": "x"}]  # fmt: skip
    case["diagnostics"].update(
        split_position=3, split_token="x", split_runner_up="y", split_margin=0.1, idempotent=False,
    )  # fmt: skip
    return document


@pytest.mark.parametrize("hostile", HOSTILE, ids=repr)
def test_a_hostile_value_in_the_remedies_is_bad_input_or_renders(hostile: Any) -> None:
    document = with_remedies(golden())
    assert Report.from_dict(document).to_dict() == document  # every key written back as read
    remedies = ("conditions", "probe", "variants", "split_position", "split_token", "idempotent")
    refused = 0
    for path in leaves(document):
        if not any(key in path for key in remedies):
            continue
        try:
            report = Report.from_dict(set_at(document, path, hostile), source="r.json")
        except BadInput as exc:
            refused += 1
            assert "\n" not in str(exc)
            continue
        render_everything(report)
    assert refused > 0
