"""The run's verdict and exit code from the case verdicts, for each --fail-on."""

from __future__ import annotations

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.judge.gate import VerdictCounts, exit_code, run_verdict, verdict_counts
from stabilitygate.results import CaseVerdict


def verdicts(*names: str) -> list[CaseVerdict]:
    return [CaseVerdict(f"c{i}", name, (f"reason {i}",)) for i, name in enumerate(names)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("names", "fatal", "expected"),
    [
        (("pass", "new"), False, "pass"),
        (("pass", "regressed"), False, "fail"),
        (("fail", "pass"), False, "fail"),
        (("fail", "error"), False, "error"),
        (("pass",), True, "error"),
        ((), False, "pass"),
    ],
)
def test_run_verdict(names: tuple[str, ...], fatal: bool, expected: str) -> None:
    assert run_verdict(verdicts(*names), fatal=fatal) == expected


@pytest.mark.parametrize(
    ("names", "fail_on", "could_not_measure", "code"),
    [
        (("pass", "new"), "regression", False, 0),
        (("pass", "regressed"), "regression", False, 1),
        (("pass", "fail"), "regression", False, 1),
        (("pass", "regressed"), "fail", False, 0),  # regressions reported, not failed
        (("pass", "fail"), "fail", False, 1),
        (("fail", "regressed"), "never", False, 0),
        (("pass", "error"), "regression", False, 3),
        (("pass", "error"), "never", False, 3),  # "never" does not hide that nothing was measured
        (("pass",), "regression", True, 3),
        (("fail",), "fail", True, 3),
    ],
)
def test_exit_code(names: tuple[str, ...], fail_on: str, could_not_measure: bool, code: int) -> None:
    assert exit_code(verdicts(*names), fail_on, could_not_measure=could_not_measure) == code


def test_unknown_fail_on_is_bad_input() -> None:
    with pytest.raises(BadInput, match="--fail-on"):
        exit_code(verdicts("pass"), "sometimes", could_not_measure=False)


def test_counts() -> None:
    counts = verdict_counts(verdicts("pass", "pass", "fail", "regressed", "warn", "new", "error"))
    assert counts == VerdictCounts(cases=7, passed=2, failed=1, regressed=1, warned=1, new=1, errors=1)


@pytest.mark.parametrize(("fail_on", "code"), [("regression", 0), ("fail", 0), ("warn", 1), ("never", 0)])
def test_a_warning_fails_the_gate_only_with_fail_on_warn(fail_on: str, code: int) -> None:
    assert exit_code(verdicts("pass", "warn", "new"), fail_on, could_not_measure=False) == code
    assert run_verdict(verdicts("pass", "warn"), fatal=False) == "pass"
    assert exit_code(verdicts("regressed"), "warn", could_not_measure=False) == 1
