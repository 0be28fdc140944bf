"""One case measured against its baseline entry: agreement, modal answer, meaning, fingerprints.

Comparing is split in two because Holm needs the raw p-values of every compared case before any
case can be judged: `compare_case` here measures, `judge.conclusion.conclude` decides once the
corrected p is known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from stabilitygate.against_baseline import Deltas, ModalShown
from stabilitygate.judge.alignment import Counted, guard_p
from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.stats import DropTest, drop_test
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import decoded, same_value, show
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.plain import round_float
from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount, FingerprintCount
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.typed_json import JSON

Similarity = Callable[[str, str], float]
SameMeaning = Callable[[str, str], bool]
ModalKind = Literal["answer", "completion"]  # "answer" with a parser, else "completion"


@dataclass(frozen=True)
class Modal:
    """The most common answer (or completion) of a run and how many samples gave it."""

    value: JSON
    count: int
    n: int
    json_text: bool = False  # a json parser's answer: canonical JSON text, shown decoded

    @property
    def majority(self) -> bool:
        return self.count * 2 > self.n

    @property
    def shown(self) -> str:
        """The modal for a sentence, e.g. 'B' (10/10)."""
        return f"{show(decoded(self.value, self.json_text))} ({self.count}/{self.n})"

    def shown_in_report(self) -> ModalShown:
        return ModalShown.shortened(self.value, self.count, self.n)


@dataclass(frozen=True)
class AgreementChange:
    """The primary agreement now against the baseline's counts of the same metric."""

    current: Agreement | None
    baseline_k: int | None
    baseline_n: int | None
    test: DropTest | None  # None when there is nothing to test against
    note: str | None = None  # set when the baseline recorded another primary metric

    @property
    def before(self) -> float | None:
        if self.baseline_k is None or not self.baseline_n:
            return None
        return self.baseline_k / self.baseline_n

    @property
    def drop(self) -> float | None:
        """Baseline share minus current share (negative for a rise); None when not tested."""
        before = self.before
        if self.test is None or self.current is None or before is None:
            return None
        return before - self.current.value


@dataclass(frozen=True)
class ModalChange:
    """The most common answer (or completion) now and in the baseline, and the test guarding a flip."""

    kind: ModalKind
    now: Modal | None
    before: Modal | None
    # Is the baseline's modal answer (or completion) significantly rarer now? Guards the answer
    # change against a narrow majority flipping by chance (judge/guard.py).
    p_value: float | None
    # A case without a parser whose meaning is judged: its answer is its meaning, so a reworded modal
    # completion is the meaning rule's to judge, never an answer change of its own.
    by_meaning: bool = False

    @property
    def differs(self) -> bool:
        return self.now is not None and self.before is not None and not same_value(self.now.value, self.before.value)

    @property
    def changed(self) -> bool:
        """Both runs had a majority answer, and they differ (never for an answer judged by meaning)."""
        now, before = self.now, self.before
        if self.by_meaning or now is None or before is None:
            return False
        return now.majority and before.majority and self.differs


@dataclass(frozen=True)
class MeaningChange:
    """How close the modal completion stays in meaning to the baseline's, and the test guarding a drift."""

    cosine: float | None  # None without a similarity model, or without completions
    checked: bool  # both runs had a majority meaning, so their modal texts can be compared
    # Is the baseline's modal meaning significantly rarer now (judge/guard.py)? None without a
    # semantic layer, and for cases with a parser, whose answer is judged by the answer change.
    p_value: float | None = None
    same: bool | None = None  # whether the two modal completions mean the same; None: not judged

    @property
    def moved(self) -> bool:
        """The modal completion's meaning differs from the baseline's."""
        return self.same is False


@dataclass(frozen=True)
class FingerprintChange:
    """The backends' system_fingerprints now and in the baseline."""

    now: tuple[str, ...]
    before: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.now and self.before) and set(self.now) != set(self.before)


@dataclass(frozen=True)
class Comparison:
    """Everything measured about a case against its baseline entry, before Holm's correction."""

    baseline_hash: str
    agreement: AgreementChange
    modal: ModalChange
    meaning: MeaningChange
    fingerprints: FingerprintChange
    deltas: Deltas
    baseline_metrics: Metrics

    @property
    def p_value(self) -> float | None:
        return self.agreement.test.p_value if self.agreement.test is not None else None

    @property
    def drop_testable(self) -> bool:
        """Whether the drop test had anything to weigh: both runs all successes (or all failures)
        cannot differ, so such a test never enters the Holm family (docs/design.md §6)."""
        a = self.agreement
        if a.test is None or a.current is None or a.baseline_k is None or a.baseline_n is None:
            return False
        successes, total = a.baseline_k + a.current.k, a.baseline_n + a.current.n
        return 0 < successes < total

    @property
    def answer_p_value(self) -> float | None:
        return self.modal.p_value

    @property
    def meaning_p_value(self) -> float | None:
        return self.meaning.p_value


def compare_case(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    primary: Agreement | None,
    *,
    similarity: Similarity | None = None,
    same_meaning: SameMeaning | None = None,
) -> Comparison:
    """Measure the case against its entry: `primary` is its primary agreement now.

    `same_meaning` decides whether two completions mean the same (default: cosine at or above the
    case's clustering bar, when `similarity` is given)."""
    agreement = _agreement_change(entry, primary)
    meaning_of = same_meaning or _by_cosine(similarity, case.thresholds.cluster_cosine)
    return Comparison(
        baseline_hash=entry.hash,
        agreement=agreement,
        modal=_modal_change(case, m, entry, by_meaning=case.answer is None and meaning_of is not None),
        meaning=_meaning_change(case, m, entry, similarity, meaning_of),
        fingerprints=FingerprintChange(_fingerprints(m.fingerprints), _fingerprints(entry.fingerprints)),
        deltas=_deltas(m, entry, agreement),
        baseline_metrics=entry.metrics,
    )


def _by_cosine(similarity: Similarity | None, bar: float) -> SameMeaning | None:
    if similarity is None:
        return None
    return lambda a, b: a == b or similarity(a, b) >= bar - EPSILON


def _agreement_change(entry: BaselineCase, current: Agreement | None) -> AgreementChange:
    if current is None:
        return AgreementChange(None, None, None, None)
    recorded = entry.primary
    if recorded is not None and recorded.metric == current.metric:
        k, n = recorded.k, recorded.n
        return AgreementChange(current, k, n, drop_test(k, n, current.k, current.n) if n else None)
    value = entry.metrics.number(current.metric)
    if value is None or entry.samples <= 0:
        return AgreementChange(current, None, None, None)
    # Another primary metric was recorded, but the baseline measured this one too: compare on it.
    k, n = round(value * entry.samples), entry.samples
    note = (
        f"compared on {current.metric}: the baseline's primary metric was "
        f"{recorded.metric if recorded else 'nothing'} (was the semantic layer switched on or off?)"
    )
    return AgreementChange(current, k, n, drop_test(k, n, current.k, current.n), note)


def _modal_change(case: ResolvedCase, m: CaseMeasurement, entry: BaselineCase, *, by_meaning: bool) -> ModalChange:
    kind: ModalKind = "answer" if case.answer is not None else "completion"
    rows_now = _answer_rows(m.answers) if kind == "answer" else _text_rows(m.completions)
    rows_before = _answer_rows(entry.answers) if kind == "answer" else _text_rows(entry.completions)
    json_text = case.answer is not None and case.answer.kind == "json"
    now = _modal(rows_now, m.samples_ok, json_text)
    before = _modal(rows_before, entry.samples, json_text)
    p_value = None
    if before is not None and m.samples_ok > 0 and not by_meaning:
        p_value = guard_p(rows_before, rows_now, same_value, (entry.samples, m.samples_ok))
    return ModalChange(kind, now, before, p_value, by_meaning)


def _meaning_change(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    similarity: Similarity | None,
    same_meaning: SameMeaning | None,
) -> MeaningChange:
    checked = _drift_checkable(m, entry)
    cosine = _modal_cosine(m, entry, similarity)
    text_now = m.completions[0].text if m.completions else None
    text_before = entry.modal_completion
    # A parsed case's answer is judged by the answer change, not by the meaning of its text.
    if same_meaning is None or text_now is None or text_before is None or case.answer is not None:
        return MeaningChange(cosine, checked)
    same = same_meaning(text_now, text_before)
    if not entry.completions or m.samples_ok == 0:
        return MeaningChange(cosine, checked, None, same)
    sizes = (entry.samples, m.samples_ok)
    p_value = guard_p(_text_rows(entry.completions), _text_rows(m.completions), same_meaning, sizes)
    return MeaningChange(cosine, checked, p_value, same)


def _answer_rows(rows: Sequence[AnswerCount]) -> list[Counted]:
    return [Counted(r.answer, r.count) for r in rows]


def _text_rows(rows: Sequence[CompletionCount]) -> list[Counted]:
    return [Counted(r.text, r.count) for r in rows]


def _modal(rows: Sequence[Counted], n: int, json_text: bool = False) -> Modal | None:
    if not rows or n <= 0:
        return None
    return Modal(rows[0].value, rows[0].count, n, json_text)


def _modal_cosine(m: CaseMeasurement, entry: BaselineCase, similarity: Similarity | None) -> float | None:
    """Cosine of the two modal completions; identical texts need no model."""
    text_now = m.completions[0].text if m.completions else None
    text_before = entry.modal_completion
    if text_now is None or text_before is None:
        return None
    if text_now == text_before:
        return 1.0
    return float(similarity(text_now, text_before)) if similarity is not None else None


def _drift_checkable(m: CaseMeasurement, entry: BaselineCase) -> bool:
    # The modal completion stands for the run's meaning only when one meaning holds a majority;
    # in a run of scattered completions it is an arbitrary pick, and comparing two arbitrary picks
    # would cry wolf on every run of a free-text case.
    return _majority_meaning(m.metrics, m.samples_ok, m.completions) and _majority_meaning(
        entry.metrics, entry.samples, entry.completions
    )


def _majority_meaning(metrics: Metrics, n: int, completions: Sequence[CompletionCount]) -> bool:
    if metrics.semantic_agreement is not None:
        return metrics.semantic_agreement > 0.5
    return bool(completions) and n > 0 and completions[0].count * 2 > n


def _fingerprints(rows: Sequence[FingerprintCount]) -> tuple[str, ...]:
    return tuple(sorted(f.fingerprint for f in rows if f.fingerprint))


def _deltas(m: CaseMeasurement, entry: BaselineCase, agreement: AgreementChange) -> Deltas:
    unique = _difference(m.metrics.unique_completions, entry.metrics.unique_completions)
    current, before = agreement.current, agreement.before
    return Deltas(
        unique_completions=int(round_float(unique)) if unique is not None else None,
        agreement=current.value - before if current is not None and before is not None else None,
        cosine_min=_difference(m.metrics.cosine_min, entry.metrics.cosine_min),
    )


def _difference(now: float | None, before: float | None) -> float | None:
    if now is None or before is None:
        return None
    return now - before
