"""One case measured against its baseline entry: agreement, parsed share, modal answer, meaning,
fingerprints, and the pooled answers its test rests on.

Comparing is split in two because the run's correction needs every compared case's test before any
case can be judged: `compare_case` here measures, the family (judge/family.py) tests and corrects,
`judge.conclusion.conclude` decides once the corrected p-values are known.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from stabilitygate.against_baseline import Deltas, ModalShown
from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.case_test import Rule
from stabilitygate.judge.pool import Counted, Pool, Runs, pool_of
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import decoded, same_value, show
from stabilitygate.metrics import Agreement, Metrics
from stabilitygate.plain import round_float
from stabilitygate.results import AnswerCount, CaseMeasurement, CompletionCount, FingerprintCount
from stabilitygate.suite.model import Regression, ResolvedCase
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
class Share:
    """k of n now against k of n in the baseline, for one share (the primary agreement, the parsed share)."""

    k: int
    n: int
    baseline_k: int
    baseline_n: int

    @property
    def before(self) -> float:
        return self.baseline_k / self.baseline_n if self.baseline_n else 0.0

    @property
    def now(self) -> float:
        return self.k / self.n if self.n else 0.0

    @property
    def drop(self) -> float:
        """Baseline share minus current share (negative for a rise)."""
        return self.before - self.now


@dataclass(frozen=True)
class AgreementChange:
    """The primary agreement now against the baseline's counts of the same metric."""

    current: Agreement | None
    baseline_k: int | None
    baseline_n: int | None
    note: str | None = None  # set when the baseline recorded another primary metric

    @property
    def compared(self) -> bool:
        return self.current is not None and self.baseline_k is not None and bool(self.baseline_n)

    @property
    def before(self) -> float | None:
        if self.baseline_k is None or not self.baseline_n:
            return None
        return self.baseline_k / self.baseline_n

    @property
    def drop(self) -> float | None:
        """Baseline share minus current share (negative for a rise); None when not compared."""
        before = self.before
        if self.current is None or before is None:
            return None
        return before - self.current.value


@dataclass(frozen=True)
class ModalChange:
    """The most common answer (or completion) now and in the baseline."""

    kind: ModalKind
    now: Modal | None
    before: Modal | None
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
    """How close the modal completion stays in meaning to the baseline's."""

    cosine: float | None  # None without a similarity model, or without completions
    checked: bool  # both runs had a majority meaning, so their modal texts can be compared
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
    """Everything measured about a case against its baseline entry, before the run's correction."""

    baseline_hash: str
    agreement: AgreementChange
    modal: ModalChange
    meaning: MeaningChange
    fingerprints: FingerprintChange
    deltas: Deltas
    baseline_metrics: Metrics
    pool: Pool  # the answers (or meanings) of both runs, which the case's test splits
    parsed: Share | None = None  # samples whose answer parsed, for a case with a parser

    def rules(self, regression: Regression) -> tuple[Rule, ...]:
        """The rules that can fail this case, each a statistic of its one test (judge/case_test.py)."""
        rules: list[Rule] = ["drop"] if self.agreement.compared else []
        if self.modal.by_meaning:
            rules += ["meaning"] if regression.fail_on_semantic_drift else []
        elif regression.fail_on_answer_change and self.modal.before is not None:
            rules.append("answer")
        rules += ["parsed"] if self.parsed is not None else []
        return tuple(rules)


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
    by_meaning = case.answer is None and meaning_of is not None
    return Comparison(
        baseline_hash=entry.hash,
        agreement=agreement,
        modal=_modal_change(case, m, entry, by_meaning=by_meaning),
        meaning=_meaning_change(case, m, entry, similarity, meaning_of),
        fingerprints=FingerprintChange(_fingerprints(m.fingerprints), _fingerprints(entry.fingerprints)),
        deltas=_deltas(m, entry, agreement),
        baseline_metrics=entry.metrics,
        pool=case_pool(case, m, entry, agreement, meaning_of if by_meaning else None),
        parsed=_parsed_share(m, entry) if case.answer is not None else None,
    )


def case_pool(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    agreement: AgreementChange,
    same_meaning: SameMeaning | None,
) -> Pool:
    """The case's answers in both runs, aligned: parsed answers (failures apart) with a parser, else
    meanings when they are judged, else completions (judge/pool.py)."""
    if case.answer is not None:
        failures = (entry.metrics.parse_failures or 0, m.metrics.parse_failures or 0)
        runs = Runs(_answer_rows(entry.answers), _answer_rows(m.answers), entry.samples, m.samples_ok, failures)
        return pool_of(runs, same_value)
    before, now = _text_rows(entry.completions), _text_rows(m.completions)
    if same_meaning is None:
        return pool_of(Runs(before, now, entry.samples, m.samples_ok), same_value)
    top = agreement.baseline_k if agreement.current is not None else None
    return pool_of(Runs(before, now, entry.samples, m.samples_ok, top_before=top), same_meaning)


def _by_cosine(similarity: Similarity | None, bar: float) -> SameMeaning | None:
    if similarity is None:
        return None
    return lambda a, b: a == b or similarity(a, b) >= bar - EPSILON


def _agreement_change(entry: BaselineCase, current: Agreement | None) -> AgreementChange:
    if current is None:
        return AgreementChange(None, None, None)
    recorded = entry.primary
    if recorded is not None and recorded.metric == current.metric:
        return AgreementChange(current, recorded.k, recorded.n)
    value = entry.metrics.number(current.metric)
    if value is None or entry.samples <= 0:
        return AgreementChange(current, None, None)
    # Another primary metric was recorded, but the baseline measured this one too: compare on it.
    note = (
        f"compared on {current.metric}: the baseline's primary metric was "
        f"{recorded.metric if recorded else 'nothing'} (was the semantic layer switched on or off?)"
    )
    return AgreementChange(current, round(value * entry.samples), entry.samples, note)


def _parsed_share(m: CaseMeasurement, entry: BaselineCase) -> Share | None:
    """Samples whose answer parsed, now and in the baseline; None when the baseline did not count them."""
    before = entry.metrics.parse_failures
    if before is None or entry.samples <= 0 or m.samples_ok <= 0:
        return None
    return Share(m.samples_ok - (m.metrics.parse_failures or 0), m.samples_ok, entry.samples - before, entry.samples)


def _modal_change(case: ResolvedCase, m: CaseMeasurement, entry: BaselineCase, *, by_meaning: bool) -> ModalChange:
    kind: ModalKind = "answer" if case.answer is not None else "completion"
    rows_now = _answer_rows(m.answers) if kind == "answer" else _text_rows(m.completions)
    rows_before = _answer_rows(entry.answers) if kind == "answer" else _text_rows(entry.completions)
    json_text = case.answer is not None and case.answer.kind == "json"
    now = _modal(rows_now, m.samples_ok, json_text)
    return ModalChange(kind, now, _modal(rows_before, entry.samples, json_text), by_meaning)


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
    return MeaningChange(cosine, checked, same_meaning(text_now, text_before))


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
