"""The sentences about the baseline that the console and the comment share."""

from __future__ import annotations

from typing import Any

from stabilitygate.report.baseline_lines import baseline_lines
from stabilitygate.report.model import Report


def report(baseline: dict[str, Any], cases: list[dict[str, Any]] | None = None) -> Report:
    return Report.from_dict(
        {
            "suite": {"path": "s.yml", "name": "demo"},
            "verdict": "pass",
            "exit_code": 0,
            "summary": {"cases": 0, "passed": 0, "failed": 0, "regressed": 0, "new": 0, "errors": 0},
            "run": {"baseline": baseline},
            "cases": cases or [],
        }
    )


def case(cid: str, status: str) -> dict[str, Any]:
    return {
        "id": cid,
        "verdict": "new",
        "reasons": [],
        "samples_requested": 8,
        "samples_ok": 8,
        "sample_errors": 0,
        "metrics": {},
        "baseline": {"status": status},
    }


def test_the_path_read_and_what_does_not_fit_it() -> None:
    lines = baseline_lines(
        report(
            {"path": "s.baseline.json", "status": "compared", "orphans": ["old-a", "old-b", "old-c"]},
            [case("x", "changed"), case("y", "missing"), case("z", "changed")],
        ),
    )
    assert lines == [
        "Compared with the baseline s.baseline.json.",
        "Definition changed since the baseline: re-record it (2 cases: x, z).",
        "3 baseline entries match no case: renamed? old-a, old-b, old-c.",
    ]


def test_one_orphan_and_a_long_list() -> None:
    (_, one) = baseline_lines(report({"path": "b", "status": "missing", "orphans": ["gone"]}))
    assert one == "1 baseline entry matches no case: renamed? gone."
    many = [f"c{i:02}" for i in range(13)]
    (_, cut) = baseline_lines(report({"path": "b", "status": "compared", "orphans": many}))
    assert cut.endswith("c08, c09 and 3 more.")


def test_a_recording_says_what_it_left_out_and_refused() -> None:
    facts = {"path": "b", "status": "updated", "orphans": ["gone"], "not_recorded": ["x"], "recorded_suite": "old"}
    lines = baseline_lines(report(facts, [case("x", "changed")]))
    assert lines == [
        "The baseline was recorded for suite 'old'; compared with 'demo' as --accept-baseline-suite asked.",
        "Not recorded in the baseline: x, none of whose 8 answers parsed: fix the parser, then record it again.",
        "1 baseline entry matched no case and was left out of the new baseline: gone.",
    ]
    # Where a recording went is said by the console's own line and the comment's notes, not here.
