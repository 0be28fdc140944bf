"""A case's one exact test over its rules, checked against brute force over every split of its samples."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest

from stabilitygate.judge import splits
from stabilitygate.judge.case_test import case_test
from stabilitygate.judge.exact import drop_p
from stabilitygate.judge.pool import Pool
from stabilitygate.judge.stages import CasePath, StageDesign, goes_on
from tests.support.benches import load_bench

FAIL = None  # a sample without an answer
PARITY = load_bench("bench_exact_parity")  # its brute force over every assignment of the labeled samples
brute_force, as_pool = PARITY.brute_force, PARITY.as_pool


CASES = [
    (["A"] * 5 + ["B"], ["A", "B", "B", FAIL, "C", "A"]),
    (["A", "A", "A", "B", "B", FAIL], ["B", "B", "B", "A", FAIL, FAIL]),
    (["A", "x", "y", "z"], ["A", "A", "q", FAIL, FAIL, "A", "r"]),
]


@pytest.mark.parametrize(("baseline", "current"), CASES)
def test_the_exact_test_is_brute_force_over_every_split(baseline: list[str | None], current: list[str | None]) -> None:
    # Brute force puts the observed assignment first: the baseline's samples are the first n_b.
    test = case_test(as_pool(baseline, current), ("drop", "answer", "parsed"))
    assert test.p_value == pytest.approx(brute_force(baseline, current), abs=1e-12)
    assert test.p_value in test.support


def test_a_binary_case_is_fishers_exact_test() -> None:
    test = case_test(Pool((10,), (6,), failures=(0, 4)), ("drop", "answer"))
    assert test.p_value == pytest.approx(210 / 4845, abs=1e-15)
    assert test.rules["drop"].own == test.rules["answer"].own == pytest.approx(test.p_value)


def test_one_answer_pooled_has_nothing_to_test() -> None:
    assert case_test(Pool((20,), (20,)), ("drop", "answer")).support == (1.0,)
    assert case_test(Pool((), (), singles=(20, 20)), ("drop", "answer")).p_value == 1.0
    assert case_test(Pool((5,), (5,)), ()).p_value == 1.0


def test_the_p_value_is_exact_its_chance_of_being_at_most_s_is_s() -> None:
    pool = Pool((7, 3), (4, 4), singles=(2, 1), failures=(0, 3))
    test = case_test(pool, ("drop", "answer", "parsed"))
    found = splits.splits_of(pool.pooled, pool.observed, pool.n_baseline)
    chances = []
    for row in found.baseline:
        b = tuple(int(v) for v in row)
        other = Pool(b[:2], tuple(p - x for p, x in zip(pool.pooled[:2], b[:2], strict=True)),
                     (b[2], pool.pooled[2] - b[2]), (b[3], pool.pooled[3] - b[3]))  # fmt: skip
        chances.append(case_test(other, ("drop", "answer", "parsed")).p_value)
    values = np.array(chances)
    for s in test.support:
        assert float(found.weight[values <= s * (1 + 1e-12)].sum()) == pytest.approx(s, abs=1e-12)


def test_drawn_splits_agree_with_the_exact_test(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = Pool((30, 6, 4), (12, 5, 3))
    exact = case_test(pool, ("drop", "answer"))
    monkeypatch.setattr(splits, "ENUMERATE", 10)
    drawn = case_test(pool, ("drop", "answer"))
    assert drawn.p_value == pytest.approx(exact.p_value, abs=4 * np.sqrt(exact.p_value / splits.DRAWS) + 1e-3)


def test_with_checks_each_split_is_weighted_by_its_chance_of_reaching_the_last_stage() -> None:
    """Checks after 5 and 10 of 15: brute force over every order of the run's samples."""
    n_b, design = 4, StageDesign(10, 15)
    assert design.checks == (5, 10)
    k_b, y = 4, 6  # the baseline all A; the run 6 A of 15 (the rest no answer)
    s = k_b + y
    weights = {}
    for b in range(max(0, s - 15), min(n_b, s) + 1):
        reach = total = 0
        for places in itertools.combinations(range(15), s - b):
            hits = np.zeros(15, dtype=int)
            hits[list(places)] = 1
            total += 1
            reach += all(goes_on(design, c, b, n_b, int(hits[:c].sum()), c) for c in design.checks)
        weights[b] = comb(n_b, b) * comb(15, s - b) / comb(n_b + 15, s) * reach / total
    expected = sum(w for b, w in weights.items() if b >= k_b) / sum(weights.values())
    path = CasePath(design, 15, (5, 10))
    test = case_test(Pool((k_b,), (y,), failures=(0, 15 - y)), ("drop",), path.survival(n_b, 15))
    assert test.p_value == pytest.approx(expected, abs=1e-12)
    assert test.p_value > drop_p(k_b, n_b, y, 15)  # reaching the end is evidence already: it costs
