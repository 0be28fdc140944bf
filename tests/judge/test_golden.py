"""The judge's output pinned byte for byte: every verdict path, its reasons and its baseline comparison.

The report JSON carries each verdict's `reasons` and `baseline` mapping unchanged, so any change here
is a change users see. The pinned file was written before the judge was split into small functions;
a refactor must leave it as it is. After an intended change of wording, rewrite it with
`.venv/bin/python -m tests.judge.test_golden` and review the diff.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stabilitygate.against_baseline import Compared
from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.judge.baseline import Baseline, BaselineCase, baseline_from_run, dump_baseline
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds
from stabilitygate.typed_json import to_json
from tests.support.typed import typed

GOLDEN = Path(__file__).parent / "golden" / "verdicts.json"
STABLE = ["A"] * 10


def case(
    cid: str, *, parser: str | None = "choice", prompt: str = "q", samples: int = 10, **thresholds: Any
) -> ResolvedCase:
    answer = {
        "choice": AnswerSpec(choice=["A", "B", "C", "D", "E", "F"]),
        "json": AnswerSpec(json="/n"),
        None: None,
    }[parser]
    return ResolvedCase(
        id=cid,
        line=3,
        messages=(Message(role="user", content=prompt),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(**thresholds),
        answer=answer,
        expected=None,
        samples=samples,
    )


def measured(
    cid: str,
    texts: Sequence[str],
    *,
    answers: Sequence[Any] | None = None,
    errors: int = 0,
    semantic: float | None = None,
    fingerprint: str = "fp_1",
    **metrics: Any,
) -> CaseMeasurement:
    n = len(texts)
    counts = sorted(Counter(texts).items(), key=lambda kv: (-kv[1], kv[0]))
    answer_rows = [{"answer": t, "count": c} for t, c in counts]
    if answers is not None:
        answer_rows = [{"answer": a, "count": c} for a, c in Counter(answers).most_common()]
    top = counts[0][1] if counts else 0
    return typed(
        CaseMeasurement,
        dict(
            id=cid,
            samples_requested=n + errors,
            samples_ok=n,
            sample_errors=errors,
            metrics={
                "unique_completions": len(counts),
                "mode_share": top / n if n else None,
                "parsed_agreement": int(answer_rows[0]["count"]) / n if answer_rows and n else None,
                "cosine_min": None if semantic is None else 0.1 + 0.2,  # float noise the judge must round
                "semantic_agreement": semantic,
                **metrics,
            },
            completions=[{"text": t, "count": c} for t, c in counts],
            answers=answer_rows,
            fingerprints=[{"fingerprint": fingerprint, "count": n}] if n else [],
            errors=[{"error": "HTTP 503 from the provider", "count": errors}] if errors else [],
        ),
    )


def similarity(a: str, b: str) -> float:
    """A stand-in for the embedding model: meaning moves only when Lyon replaces Paris."""
    return 0.62 if ("Lyon" in a) != ("Lyon" in b) else 0.971234567


Scenario = tuple[list[ResolvedCase], list[CaseMeasurement], Baseline | None, Regression]


def mixed() -> Scenario:
    """One family of many compared cases, with every verdict and most sentences."""
    long_before, long_now = "x" * 400, "y" * 400
    recorded = [
        (case("stable"), measured("stable", STABLE), measured("stable", STABLE)),
        (case("noise"), measured("noise", STABLE), measured("noise", ["A"] * 9 + ["B"], errors=1)),
        (case("rise"), measured("rise", ["A"] * 8 + ["B"] * 2), measured("rise", STABLE)),
        (case("flip"), measured("flip", STABLE), measured("flip", ["B"] * 10)),
        (case("narrow"), measured("narrow", ["A"] * 6 + ["B"] * 4), measured("narrow", ["B"] * 6 + ["A"] * 4)),
        (
            case("scattered-mode"),
            measured("scattered-mode", ["A"] * 6 + ["B"] * 4),
            measured("scattered-mode", ["B"] * 5 + ["A"] * 4 + ["C"]),
        ),
        (
            case("fingerprint"),
            measured("fingerprint", STABLE, fingerprint="fp_1"),
            measured("fingerprint", STABLE, fingerprint="fp_2"),
        ),
        (
            case("fails", max_unique=1, min_cosine=0.9, min_agreement=0.5),
            measured("fails", STABLE),
            measured("fails", ["A"] * 6 + ["B"] * 4),
        ),
        (
            case("completion", parser=None),
            measured("completion", ["It is Paris."] * 10),
            measured("completion", ["Paris."] * 10),
        ),
        (
            case("drift", parser=None),
            measured("drift", ["The capital is Paris."] * 10, semantic=1.0),
            measured("drift", ["The capital is Lyon!"] * 10, semantic=1.0),
        ),
        (
            case("close", parser=None),
            measured("close", ["The capital is Paris."] * 10, semantic=1.0),
            measured("close", ["Paris is the capital."] * 10, semantic=0.9),
        ),
        (
            case("scattered-meaning", parser=None),
            measured("scattered-meaning", [f"summary {i}" for i in range(10)], semantic=0.3),
            measured("scattered-meaning", [f"résumé {i} Lyon" for i in range(10)], semantic=0.3),
        ),
        (
            case("semantics-off", parser=None),
            measured("semantics-off", ["x"] * 10, semantic=1.0),
            measured("semantics-off", ["x"] * 9 + ["y"]),
        ),
        (case("long", parser=None), measured("long", [long_before] * 10), measured("long", [long_now] * 10)),
        (
            case("json", parser="json"),
            measured("json", ['{"n": 3}'] * 10, answers=[3] * 10),
            measured("json", ['{"n": 3.0}'] * 9 + ['{"n": 4}'], answers=[3.0] * 9 + [4]),
        ),
        (case("errors"), measured("errors", STABLE), measured("errors", ["A"], errors=9)),
    ]
    cases = [c for c, _, _ in recorded]
    baseline = baseline_from_run(cases, [before for _, before, _ in recorded], "golden")
    missing, edited = case("missing"), case("stable-edited", prompt="q, edited")
    old_edited = baseline_from_run([case("stable-edited")], [measured("stable-edited", STABLE)], "golden")
    baseline = Baseline(baseline.suite, {**baseline.cases, **old_edited.cases})
    now = [m for _, _, m in recorded] + [measured("missing", STABLE), measured("stable-edited", ["B"] * 10)]
    unmeasured = case("unmeasured")
    return [*cases, missing, edited, unmeasured], now, baseline, Regression()


def one_drop() -> Scenario:
    """A drop in a small family (two cases, one of them holding one meaning pooled): regressed on the
    drop, p on its own and after correction."""
    cases = [case("drop"), case("few", parser=None, samples=3)]
    baseline = baseline_from_run(cases, [measured("drop", STABLE), measured("few", ["a", "a"])], "golden")
    now = [measured("drop", ["A"] * 5 + ["B"] * 3 + ["C"] * 2), measured("few", ["a", "b", "c"])]
    return cases, now, baseline, Regression()


def two_drops() -> Scenario:
    """Two cases drop alike: each significant alone (p = 0.043), not both after correction (0.085, below
    twice alpha): warnings."""
    cases = [case("first"), case("second")]
    baseline = baseline_from_run(cases, [measured("first", STABLE), measured("second", STABLE)], "golden")
    now = [measured("first", ["A"] * 6 + ["B"] * 4), measured("second", ["A"] * 6 + ["C"] * 4)]
    return cases, now, baseline, Regression()


def rules_off() -> Scenario:
    """Answer change, drift and a small drop, each reported and not failed."""
    cases = [case("flip"), case("drift", parser=None), case("small-drop")]
    baseline = baseline_from_run(
        cases,
        [
            measured("flip", STABLE),
            measured("drift", ["The capital is Paris."] * 10, semantic=1.0),
            measured("small-drop", STABLE),
        ],
        "golden",
    )
    now = [
        measured("flip", ["B"] * 10),
        measured("drift", ["The capital is Lyon!"] * 10, semantic=1.0),
        measured("small-drop", ["A"] * 6 + ["B"] * 4),
    ]
    regression = Regression(fail_on_answer_change=False, fail_on_semantic_drift=False, min_drop=0.5, alpha=0.1)
    return cases, now, baseline, regression


def no_baseline() -> Scenario:
    """No baseline file: new, or fail and error on absolute grounds."""
    cases = [
        case("new"),
        case(
            "thresholds",
            max_unique=2,
            min_mode_share=0.8,
            min_agreement=0.9,
            min_cosine=0.9,
            max_semantic_clusters=1,
            min_accuracy=0.7,
            min_schema_valid=0.8,
        ),
        case("met", parser=None, max_unique=3, min_mode_share=0.5, min_accuracy=0.5, min_schema_valid=0.5),
        case("errors", max_sample_errors=0),
        case("one-sample", max_sample_errors=100),
    ]
    now = [
        measured("new", STABLE),
        measured(
            "thresholds",
            ["A"] * 6 + ["B"] * 3 + ["C"],
            semantic=0.7,
            semantic_clusters=3,
            accuracy=0.6,
            schema_valid_share=0.7,
        ),
        measured("met", ["A"] * 7 + ["B"] * 3),
        measured("errors", ["A"] * 9, errors=1),
        measured("one-sample", ["A"], errors=1),
    ]
    return cases, now, None, Regression()


def baseline_without_values() -> Scenario:
    """An entry that recorded neither the current metric nor a primary one: nothing to test."""
    c = case("bare", parser=None)
    bare = typed(
        BaselineCase,
        dict(
            hash=c.definition_hash,
            samples=10,
            metrics={},
            primary=None,
            modal_completion="x",
            modal_answer=None,
            completions=[{"text": "x", "count": 10}],
            answers=[],
            fingerprints=[],
        ),
    )
    return [c], [measured("bare", ["x"] * 10)], Baseline("golden", {"bare": bare}), Regression()


SCENARIOS = {
    "mixed": mixed,
    "one_drop": one_drop,
    "two_drops": two_drops,
    "rules_off": rules_off,
    "no_baseline": no_baseline,
    "baseline_without_values": baseline_without_values,
}


def judged(scenario: Scenario) -> list[CaseVerdict]:
    cases, now, baseline, regression = scenario
    return judge_cases(cases, now, baseline, regression, similarity=similarity)


def pinned_verdict(verdict: CaseVerdict) -> dict[str, Any]:
    """The verdict as it was pinned: `primary` was added to CaseVerdict later and is checked on its own."""
    data = to_json(verdict)
    assert isinstance(data, dict)
    return {key: value for key, value in data.items() if key != "primary"}


def current() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, build in SCENARIOS.items():
        scenario = build()
        baseline = scenario[2]
        out[name] = {
            "verdicts": [pinned_verdict(v) for v in judged(scenario)],
            "baseline_file": dump_baseline(baseline) if baseline is not None else None,
        }
    return out


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def test_verdicts_and_baselines_are_byte_identical_to_the_pinned_file() -> None:
    assert dump(current()) == GOLDEN.read_text(encoding="utf-8")


def test_the_pinned_scenarios_reach_every_verdict_and_comparison_path() -> None:
    """Guards the golden file's coverage: each path below must stay in it."""
    verdicts = [v for build in SCENARIOS.values() for v in judged(build())]
    assert {v.verdict for v in verdicts} == {"pass", "fail", "regressed", "warn", "new", "error"}
    compared = [v.baseline for v in verdicts if isinstance(v.baseline, Compared)]
    for flag in ("dropped", "answer_changed", "semantic_drift", "fingerprints_changed"):
        assert any(getattr(b, flag) for b in compared), flag
    statuses = {v.baseline.status for v in verdicts if v.baseline}
    assert statuses == {"compared", "no_baseline", "missing", "changed", "not_measured"}


def test_each_verdict_carries_the_primary_agreement_of_its_measurement() -> None:
    for build in SCENARIOS.values():
        cases, now, _, _ = scenario = build()
        by_id = {m.id: m for m in now}
        for c, verdict in zip(cases, judged(scenario), strict=True):
            m = by_id.get(c.id)
            assert verdict.primary == (primary_agreement(c, m) if m is not None else None), c.id


if __name__ == "__main__":
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(dump(current()), encoding="utf-8")
    print(f"wrote {GOLDEN}")
