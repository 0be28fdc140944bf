"""The run's family across stages: each test's combined p-value, the look, and what the report records."""

from __future__ import annotations

import pytest

from stabilitygate.against_baseline import Compared, StageSizes
from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.family import RuleTest, correct_family, drop_p_min, guard_p_min
from stabilitygate.judge.stages import FIRST_STAGE_WEIGHT, StageDesign, StagedRun
from stabilitygate.judge.stats import drop_test
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.suite.model import Regression
from tests.judge.comparison_cases import case, entry, run

ADAPTIVE = StageDesign(10, 20)


def test_a_second_stage_enters_at_its_share_of_the_level() -> None:
    test = RuleTest(ADAPTIVE, p_first=0.03, p_final=0.004, p_min_first=1e-6, p_min_last=1e-9)
    assert test.p_value == pytest.approx(0.004 / (1 - FIRST_STAGE_WEIGHT))
    assert test.p_min == pytest.approx(1e-9 / (1 - FIRST_STAGE_WEIGHT))
    looked = RuleTest(ADAPTIVE, 0.0001, None, 1e-6, 1e-9, looked=True)
    assert looked.p_value == 1.0 and looked.p_min == test.p_min  # stopped: never fails, still counted
    decisions = correct_family([test, looked], 0.05)
    assert decisions[0].rejected and decisions[0].counted == 2
    assert decisions[0].p_adjusted == pytest.approx(2 * 0.004 / 0.7)


def test_the_least_p_values_come_from_the_baseline() -> None:
    assert drop_p_min(10, 10, 10) == drop_test(10, 10, 0, 10).p_value
    assert drop_p_min(0, 0, 10) == 1.0
    assert guard_p_min(6, 10) == 0.0 and guard_p_min(5, 10) == 1.0  # no majority: the rule cannot fail


def test_judge_cases_reads_the_stages_and_records_them() -> None:
    """10/10 in the baseline; the first stage 8/10 (inconclusive), the second 13/20 in all."""
    c = case(parser=True).model_copy(update={"max_samples": 20})
    before = entry([('{"n": 1}', 10)], [(1, 10)])
    baseline = Baseline(suite="s", cases={"c": before})
    first = run([('{"n": 1}', 8), ('{"n": 2}', 2)], [(1, 8), (2, 2)])
    final = run([('{"n": 1}', 13), ('{"n": 2}', 7)], [(1, 13), (2, 7)])
    regression = Regression()
    [fixed] = judge_cases([c], [final], baseline, regression)
    [staged] = judge_cases([c], [final], baseline, regression, stages=StagedRun({"c": first}, frozenset()))
    b_fixed, b_staged = fixed.baseline, staged.baseline
    assert isinstance(b_fixed, Compared) and isinstance(b_staged, Compared)
    assert b_fixed.stage == "first" and b_fixed.stages == StageSizes(samples=10, max_samples=10, look=None)
    assert b_staged.stage == "second" and b_staged.stages == StageSizes(samples=10, max_samples=20, look=5)
    p1, p2 = drop_test(10, 10, 8, 10).p_value, drop_test(10, 10, 13, 20).p_value
    combined = min(p1 / FIRST_STAGE_WEIGHT, p2 / (1 - FIRST_STAGE_WEIGHT))
    assert b_staged.p_value == pytest.approx(p2, abs=1e-6)  # the report's raw p: on every sample
    assert b_staged.p_holm is not None and b_fixed.p_holm is not None
    assert b_staged.p_holm >= combined - 1e-6  # corrected across the stages and the family
    assert b_fixed.p_holm < b_staged.p_holm  # a second look is paid for
    assert b_staged.detectable_drop is not None and 0 < b_staged.detectable_drop < 1
    assert b_staged.power_level is not None and b_staged.power_level > 0
    assert b_staged.suite_baseline_samples == 50


def test_a_case_stopped_at_the_look_is_never_failed() -> None:
    c = case(parser=True).model_copy(update={"max_samples": 20})
    baseline = Baseline(suite="s", cases={"c": entry([('{"n": 1}', 50)], [(1, 50)])})
    # Whatever its few samples say (here a flip), a case stopped at the look cannot fail on a test.
    flipped = run([('{"n": 2}', 5)], [(2, 5)])
    [verdict] = judge_cases([c], [flipped], baseline, Regression(), stages=StagedRun({}, frozenset({"c"})))
    assert verdict.verdict != "regressed"
    assert isinstance(verdict.baseline, Compared) and verdict.baseline.stage == "look"
