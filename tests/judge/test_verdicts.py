"""Every verdict path of docs/design.md ("Judging"), its precedence, the correction across cases, and
reasons with numbers."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from stabilitygate.against_baseline import Compared, Deltas, NotCompared
from stabilitygate.judge.baseline import Baseline, baseline_from_run
from stabilitygate.judge.verdicts import CHANGED, judge_cases
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, Regression, ResolvedCase, Thresholds
from tests.support.typed import typed

REGRESSION = Regression()
P_6_OF_10 = 210 / 4845  # the case's exact test: 10/10 in the baseline against 6/10 now (Fisher's value)


def case(cid: str = "c", *, parser: bool = True, prompt: str = "q", **thresholds: Any) -> ResolvedCase:
    return ResolvedCase(
        id=cid,
        line=7,
        messages=(Message(role="user", content=prompt),),
        provider=ProviderConfig(type="openai", model="m"),
        thresholds=Thresholds(**thresholds),
        answer=AnswerSpec(choice=["A", "B", "C"]) if parser else None,
        expected=None,
        samples=10,
    )


def measured(
    cid: str,
    texts: Sequence[str],
    *,
    errors: int = 0,
    semantic: float | None = None,
    fingerprint: str = "fp_1",
) -> CaseMeasurement:
    n = len(texts)
    counts = sorted(Counter(texts).items(), key=lambda kv: (-kv[1], kv[0]))
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
                "parsed_agreement": top / n if n else None,
                "cosine_min": None if semantic is None else 0.9,
                "semantic_agreement": semantic,
            },
            completions=[{"text": t, "count": c} for t, c in counts],
            answers=[{"answer": t, "count": c} for t, c in counts],
            fingerprints=[{"fingerprint": fingerprint, "count": n}] if n else [],
            errors=[{"error": "timeout", "count": errors}] if errors else [],
        ),
    )


def compared(v: CaseVerdict) -> Compared:
    """The verdict's comparison with its baseline entry; the case must have been compared."""
    assert isinstance(v.baseline, Compared), v.baseline
    return v.baseline


def record(cases: Sequence[ResolvedCase], runs: Sequence[CaseMeasurement]) -> Baseline:
    return baseline_from_run(cases, runs, "demo")


def one(
    current: CaseMeasurement,
    *,
    before: CaseMeasurement | None = None,
    c: ResolvedCase | None = None,
    regression: Regression = REGRESSION,
    **kwargs: Any,
) -> CaseVerdict:
    c = c or case(current.id)
    baseline = record([c], [before]) if before is not None else None
    (verdict,) = judge_cases([c], [current], baseline, regression, **kwargs)
    return verdict


STABLE = ["A"] * 10


def test_regressed_with_p_after_correction_and_on_its_own() -> None:
    v = one(measured("c", ["A"] * 6 + ["B"] * 4), before=measured("c", STABLE))
    assert v.verdict == "regressed"
    # One test for the case (its drop and its answer rule together); alone in the family, it is its own.
    assert v.reasons[0] == (
        "agreement 6/10 against 10/10 in the baseline: a drop of 0.40, p = 0.043 after correction (0.043 on its own)"
    )
    b = compared(v)
    assert (b.baseline_k, b.baseline_n, b.k, b.n) == (10, 10, 6, 10)
    assert b.p_value == pytest.approx(P_6_OF_10, abs=1e-9) and b.p_adjusted == pytest.approx(P_6_OF_10, abs=1e-9)
    assert b.test == "permutation" and b.tested is True
    assert b.drop == pytest.approx(0.4) and b.dropped is True and b.family_size == 1
    assert b.metrics.parsed_agreement == 1.0
    assert b.deltas == Deltas(unique_completions=1, agreement=pytest.approx(-0.4), cosine_min=None)
    assert b.answer_changed is False and b.fingerprints_changed is False


def test_cases_that_held_one_answer_in_both_runs_take_no_share_of_alpha() -> None:
    cases = [case("a"), case("b"), case("c")]
    baseline = record(cases, [measured(x.id, STABLE) for x in cases])
    now = [measured("a", ["A"] * 6 + ["B"] * 4), measured("b", STABLE), measured("c", STABLE)]
    a, b, c = judge_cases(cases, now, baseline, REGRESSION)
    # b and c answered 'A' 20 times out of 20: their tests cannot reject, so the family is a's test.
    assert (a.verdict, b.verdict, c.verdict) == ("regressed", "pass", "pass")
    assert "p = 0.043 after correction (0.043 on its own)" in a.reasons[0]
    assert compared(a).family_size == 1


def test_a_case_that_cannot_reach_so_small_a_p_takes_nothing_at_that_step() -> None:
    cases = [case("a"), case("b")]
    baseline = record(cases, [measured("a", STABLE), measured("b", STABLE)])
    now = [measured("a", ["A"] * 6 + ["B"] * 4), measured("b", ["A"] * 9 + ["B"])]
    a, b = judge_cases(cases, now, baseline, REGRESSION)
    # b pooled 19 'A' and one 'B': its p-value is 0.5 or 1, never 0.043, so a is held to alpha itself.
    assert a.verdict == "regressed" and b.verdict == "pass"
    assert compared(a).p_adjusted == pytest.approx(P_6_OF_10, abs=1e-9)
    assert compared(a).family_size == 2 and compared(b).p_adjusted == pytest.approx(0.5, abs=1e-9)


def test_noise_passes_with_the_numbers() -> None:
    v = one(measured("c", ["A"] * 19 + ["B"]), before=measured("c", ["A"] * 20))
    assert v.verdict == "pass"
    assert v.reasons[0] == (
        "agreement 19/20 against 20/20 in the baseline: a drop of 0.05, p = 0.50 after correction (0.50 on its own): "
        "not significant"
    )
    assert v.reasons[1] == "measured: 2 unique completions in 20 samples, agreement 19/20"


def test_a_drop_of_min_drop_that_is_noise_even_alone_passes() -> None:
    v = one(measured("c", ["A"] * 9 + ["B"]), before=measured("c", STABLE))
    assert v.verdict == "pass"
    assert v.reasons[0] == (
        "agreement 9/10 against 10/10 in the baseline: a drop of 0.10, p = 0.50 after correction (0.50 on its own): "
        "not significant"
    )


def test_a_significant_drop_smaller_than_min_drop_passes() -> None:
    v = one(measured("c", ["A"] * 6 + ["B"] * 4), before=measured("c", STABLE), regression=Regression(min_drop=0.5))
    assert v.verdict == "pass"
    assert "a drop of 0.40, significant (p = 0.043 after correction) but smaller than min_drop 0.50" in v.reasons[0]


def test_no_drop_and_a_rise() -> None:
    assert one(measured("c", STABLE), before=measured("c", STABLE)).reasons[0].endswith("in the baseline: no drop")
    rise = one(measured("c", STABLE), before=measured("c", ["A"] * 8 + ["B"] * 2))
    assert rise.verdict == "pass" and rise.reasons[0].endswith("in the baseline: up 0.20")


def test_answer_flip_is_a_regression() -> None:
    v = one(measured("c", ["B"] * 10), before=measured("c", STABLE))
    assert v.verdict == "regressed"
    assert v.reasons[0] == (
        "answer changed: 'B' (10/10) where the baseline had 'A' (10/10): "
        "the baseline's answer is significantly rarer now, p < 0.001 after correction"
    )
    assert compared(v).answer_changed is True
    assert compared(v).answer_p_adjusted < 0.001


def test_a_narrow_majority_flipping_by_chance_is_neither_a_failure_nor_a_warning() -> None:
    # 6/10 'A' then 6/10 'B': each a majority, but 'A' at 4/10 is nowhere near significantly rarer.
    v = one(measured("c", ["B"] * 6 + ["A"] * 4), before=measured("c", ["A"] * 6 + ["B"] * 4))
    assert v.verdict == "pass"
    assert compared(v).answer_changed is True and compared(v).answer_p_value > 0.05
    assert any("not significantly rarer" in r and "'B' (6/10)" in r and "by chance" in r for r in v.reasons)


def test_answer_flip_reported_only_when_the_rule_is_off() -> None:
    v = one(measured("c", ["B"] * 10), before=measured("c", STABLE), regression=Regression(fail_on_answer_change=False))
    assert v.verdict == "pass"
    assert any("answer changed" in r and "not failed" in r for r in v.reasons)


def test_answer_change_needs_a_majority_on_both_sides() -> None:
    # 5/10 is not a majority: the most common answer moved, but that is noise, not a change.
    v = one(measured("c", ["B"] * 5 + ["A"] * 4 + ["C"]), before=measured("c", ["A"] * 6 + ["B"] * 4))
    assert v.verdict == "pass"
    assert any("not a majority in both runs" in r and "'B' (5/10)" in r for r in v.reasons)


def test_modal_completion_change_without_parser() -> None:
    c = case("c", parser=False)
    v = one(measured("c", ["Paris."] * 10), before=measured("c", ["It is Paris."] * 10), c=c)
    assert v.verdict == "regressed"
    assert v.reasons[0] == (
        "completion changed: 'Paris.' (10/10) where the baseline had 'It is Paris.' (10/10): "
        "the baseline's completion is significantly rarer now, p < 0.001 after correction"
    )
    assert compared(v).metric == "mode_share"


def test_semantic_drift() -> None:
    c = case("c", parser=False)
    no_flip = Regression(fail_on_answer_change=False)
    before = measured("c", ["The capital is Paris."] * 10, semantic=1.0)
    now = measured("c", ["The capital is Lyon."] * 10, semantic=1.0)
    v = one(now, before=before, c=c, regression=no_flip, similarity=lambda a, b: 0.62)
    assert v.verdict == "regressed"
    assert v.reasons[0] == (
        "the most common completion moved in meaning (cosine 0.620 to the baseline's): "
        "the baseline's meaning is significantly rarer now, p < 0.001 after correction"
    )
    assert compared(v).semantic_drift is True and compared(v).modal_cosine == 0.62
    assert compared(v).metric == "semantic_agreement"
    close = one(now, before=before, c=c, regression=no_flip, similarity=lambda a, b: 0.97)
    assert close.verdict == "pass" and compared(close).modal_cosine == 0.97
    # Without the semantic layer there is nothing to compare.
    off = one(now, before=before, c=c, regression=no_flip)
    assert off.verdict == "pass" and compared(off).modal_cosine is None


def test_no_drift_between_two_arbitrary_picks_of_scattered_runs() -> None:
    """A free-text case whose samples all differ has no modal meaning; comparing picks would cry wolf."""
    c = case("c", parser=False)
    before = measured("c", [f"summary {i}" for i in range(10)], semantic=0.3)
    now = measured("c", [f"résumé {i}" for i in range(10)], semantic=0.3)
    v = one(now, before=before, c=c, similarity=lambda a, b: 0.5)
    assert v.verdict == "pass"
    assert any("not counted as drift" in r for r in v.reasons)


def test_changed_fingerprint_is_reported_not_failed() -> None:
    v = one(measured("c", STABLE, fingerprint="fp_2"), before=measured("c", STABLE, fingerprint="fp_1"))
    assert v.verdict == "pass"
    assert any("system_fingerprint changed: fp_2 where the baseline had fp_1" in r for r in v.reasons)
    assert compared(v).fingerprints_changed is True


def test_new_without_a_baseline_without_an_entry_and_after_an_edit() -> None:
    no_file = one(measured("c", STABLE))
    assert no_file.verdict == "new" and "--update-baseline" in no_file.reasons[0]
    assert no_file.baseline == NotCompared("no_baseline")

    other = record([case("other")], [measured("other", STABLE)])
    (missing,) = judge_cases([case("c")], [measured("c", STABLE)], other, REGRESSION)
    assert missing.verdict == "new" and missing.baseline == NotCompared("missing")

    edited = case("c", prompt="q, edited")
    recorded = record([case("c")], [measured("c", STABLE)])
    (v,) = judge_cases([edited], [measured("c", ["B"] * 10)], recorded, REGRESSION)
    assert v.verdict == "new" and v.reasons[0] == CHANGED
    assert isinstance(v.baseline, NotCompared) and v.baseline.status == "changed"
    assert v.baseline.current_hash == edited.definition_hash != v.baseline.hash


def test_thresholds_fail_over_a_regression() -> None:
    c = case("c", max_unique=1)
    v = one(measured("c", ["A"] * 6 + ["B"] * 4), before=measured("c", STABLE), c=c)
    assert v.verdict == "fail"
    assert v.reasons[0] == "2 unique completions of 10 where at most 1 are allowed (max_unique)"
    assert any(r.startswith("agreement 6/10 against 10/10") for r in v.reasons)


def test_fail_without_baseline_is_fail_not_new() -> None:
    v = one(measured("c", ["A"] * 6 + ["B"] * 4), c=case("c", min_agreement=1.0))
    assert v.verdict == "fail" and "below min_agreement 1.00" in v.reasons[0]


def test_error_over_everything() -> None:
    c = case("c", max_unique=1)
    v = one(measured("c", ["A"] * 2 + ["B"] * 2, errors=6), before=measured("c", STABLE), c=c)
    assert v.verdict == "error"
    assert v.reasons == ("6 of 10 samples failed, more than the 5 allowed (most common error, 6x: timeout)",)


def test_a_case_without_measurement_is_an_error() -> None:
    (v,) = judge_cases([case("c")], [], None, REGRESSION)
    assert v.verdict == "error" and "not measured" in v.reasons[0]


def test_error_cases_are_not_in_the_family_but_failing_ones_are() -> None:
    cases = [case("a"), case("b"), case("f", max_unique=1)]
    baseline = record(cases, [measured(x.id, STABLE) for x in cases])
    drop = ["A"] * 6 + ["B"] * 4
    now = [measured("a", drop), measured("b", ["A"], errors=9), measured("f", drop)]
    a, b, f = judge_cases(cases, now, baseline, REGRESSION)
    assert (a.verdict, b.verdict, f.verdict) == ("warn", "error", "fail")
    assert compared(a).family_size == 2  # a's and f's tests
    assert compared(a).p_adjusted == pytest.approx(1 - (1 - P_6_OF_10) ** 2, abs=1e-9)


def test_baseline_recorded_with_semantics_compared_without() -> None:
    c = case("c", parser=False)
    before = measured("c", ["x"] * 10, semantic=1.0)
    v = one(measured("c", ["x"] * 10), before=before, c=c)
    assert v.verdict == "pass"
    assert any("compared on mode_share" in r for r in v.reasons)


def test_every_verdict_has_reasons_with_numbers() -> None:
    cases = [case("p"), case("f", max_unique=1), case("r"), case("n"), case("e")]
    baseline = record(cases[:3], [measured(x.id, STABLE) for x in cases[:3]])
    now = [
        measured("p", STABLE),
        measured("f", ["A", "B"] * 5),
        measured("r", ["B"] * 10),
        measured("n", STABLE),
        measured("e", ["A"], errors=9),
    ]
    verdicts = judge_cases(cases, now, baseline, REGRESSION)
    assert [v.verdict for v in verdicts] == ["pass", "fail", "regressed", "new", "error"]
    for v in verdicts:
        assert v.reasons and all(r.strip() for r in v.reasons)
        assert any(re.search(r"\d+/\d+|\d+ of \d+", r) for r in v.reasons), v


def test_a_reworded_free_text_majority_is_judged_by_its_meaning() -> None:
    c = case("c", parser=False)
    before = measured("c", ["Paris is the capital of France."] * 8 + ["x", "y"], semantic=0.8)
    now = measured("c", ["Paris is the capital city of France."] * 8 + ["x", "y"], semantic=0.8)
    v = one(now, before=before, c=c, similarity=lambda a, b: 0.983 if "Paris" in a and "Paris" in b else 0.1)
    assert v.verdict == "pass"
    assert any("judged by its meaning, not its wording" in r for r in v.reasons)
    assert compared(v).answer_p_value is None and compared(v).answer_changed is False


def test_a_drop_in_the_parsed_share_is_judged_like_any_other_drop_in_the_same_family() -> None:
    """Issue 26: the share of samples whose answer parsed is a rule of the case's test, with its own
    sentence and its own keys in the comparison."""
    from stabilitygate.pipeline.evaluate import measure_cases
    from stabilitygate.samples import Sample

    c = case("c")
    texts_before = ["The answer is A."] * 20
    texts_now = ["The answer is A."] * 12 + ["I would rather not say."] * 8
    before = measure_cases([c], [Sample("c", i, t) for i, t in enumerate(texts_before)], requested={"c": 20},
                           embedder=None, sampling=None)  # fmt: skip
    now = measure_cases([c], [Sample("c", i, t) for i, t in enumerate(texts_now)], requested={"c": 20},
                        embedder=None, sampling=None)  # fmt: skip
    (v,) = judge_cases([c], now, record([c], before), REGRESSION)
    b = compared(v)
    assert v.verdict == "regressed" and b.parsed_dropped is True
    assert (b.parsed_k, b.parsed_n, b.baseline_parsed_k, b.baseline_parsed_n) == (12, 20, 20, 20)
    assert b.parsed_p_value is not None and b.parsed_p_adjusted is not None and b.parsed_p_adjusted < 0.05
    assert any(
        r.startswith("parsed 12/20 against 20/20 in the baseline: a drop of 0.40 in the share") for r in v.reasons
    )
    assert b.family_size == 1  # one test for the case: its drop, answer and parsed-share rules together
