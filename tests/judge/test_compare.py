"""One case measured against its baseline entry, below the level of verdicts."""

from __future__ import annotations

from dataclasses import replace

from stabilitygate.judge.compare import Modal
from stabilitygate.judge.conclusion import conclude
from stabilitygate.metrics import Metrics
from stabilitygate.suite.model import Regression
from tests.judge.comparison_cases import case, compare, entry, run


def test_numeric_json_answer_is_not_a_change() -> None:
    now = run([('{"n": 3.0}', 10)], [(3.0, 10)])
    before = entry([('{"n": 3}', 10)], [(3, 10)])
    c = compare(case(True), now, before)
    assert c.modal.changed is False and c.modal.differs is False
    assert conclude(c, Regression(), outcome=None, family=1).regressed is False


def test_majority_means_more_than_half() -> None:
    assert Modal("A", 6, 10).majority and not Modal("A", 5, 10).majority


def test_drift_guard_without_semantics_uses_the_exact_mode() -> None:
    # Semantic layer off in the metrics but a similarity given: the exact modal completion decides.
    scattered = run([("a", 3), ("b", 3), ("c", 4)], [])
    before = entry([("z", 10)], [])
    c = compare(case(False), scattered, before, similarity=lambda x, y: 0.1)
    assert c.meaning.checked is False and c.meaning.cosine == 0.1
    steady = run([("y", 10)], [])
    assert compare(case(False), steady, before, similarity=lambda x, y: 0.1).meaning.checked is True


def test_identical_modal_texts_need_no_model() -> None:
    def never(a: str, b: str) -> float:
        raise AssertionError("similarity called for identical texts")

    c = compare(case(False), run([("same", 10)], []), entry([("same", 10)], []), similarity=never)
    assert c.meaning.cosine == 1.0


def test_baseline_without_the_current_metric_is_not_compared() -> None:
    before = entry([("x", 10)], [])
    before = replace(before, primary=None, metrics=Metrics())
    c = compare(case(False), run([("x", 10)], []), before)
    assert not c.agreement.compared and "drop" not in c.rules(Regression())
    reasons = conclude(c, Regression(), outcome=None, family=0).reasons
    assert reasons[0] == "mode share 10/10: the baseline has no value to compare with"


def test_the_pool_aligns_answers_and_keeps_failures_apart() -> None:
    # 8 of 10 parse now; the baseline kept rows for 9 of its 10 (one unknown answer: a single).
    now = run([('{"n": 1}', 6), ('{"n": 2}', 2), ("oops", 2)], [(1, 6), (2, 2)], parse_failures=2)
    before = entry([('{"n": 1}', 7), ('{"n": 2}', 2)], [(1, 7), (2, 2)], parse_failures=0)
    before = replace(before, samples=10)
    c = compare(case(True), now, before)
    assert c.pool.baseline == (7, 2) and c.pool.current == (6, 2)
    assert c.pool.singles == (1, 0) and c.pool.failures == (0, 2)
    assert c.parsed is not None and (c.parsed.k, c.parsed.n, c.parsed.baseline_k) == (8, 10, 10)
    assert c.rules(Regression()) == ("drop", "answer", "parsed")
    assert c.rules(Regression(fail_on_answer_change=False)) == ("drop", "parsed")


def test_a_text_case_judged_by_meaning_has_the_meaning_rule_not_the_answer_rule() -> None:
    same_start = lambda a, b: a.split()[0] == b.split()[0]  # noqa: E731
    now = run([("Paris is it", 6), ("Paris again", 4)], [])
    before = entry([("Paris surely", 10)], [])
    c = compare(case(False), now, before, same_meaning=same_start)
    assert c.pool.baseline == (10,) and c.pool.current == (10,)  # one meaning pooled: nothing to test
    assert c.rules(Regression()) == ("drop", "meaning") and c.modal.by_meaning
