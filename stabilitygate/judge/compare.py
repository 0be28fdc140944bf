"""One case against its baseline entry: the drop test, the answer change, semantic drift.

Comparing is split in two because Holm needs the raw p-values of every compared case before any
case can be judged: `compare_case` measures, `conclude` decides once the corrected p is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.stats import DropTest, drop_test
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import p_after_and_before_holm, p_after_holm, same_value, show
from stabilitygate.plain import round_float
from stabilitygate.results import Agreement, CaseMeasurement
from stabilitygate.suite.model import Regression, ResolvedCase

Similarity = Callable[[str, str], float]
ModalKind = Literal["answer", "completion"]  # "answer" with a parser, else "completion"
MODAL_CHARS = 300  # of a modal completion kept in the comparison mapping


def _rounded(value: float | None) -> float | None:
    return None if value is None else round_float(value)


# --- what was measured against the baseline -----------------------------------------------------


@dataclass(frozen=True)
class Modal:
    """The most common answer (or completion) of a run and how many samples gave it."""

    value: Any
    count: int
    n: int

    @property
    def majority(self) -> bool:
        return self.count * 2 > self.n

    @property
    def shown(self) -> str:
        """The modal for a sentence, e.g. 'B' (10/10)."""
        return f"{show(self.value)} ({self.count}/{self.n})"

    def to_json(self) -> dict[str, Any]:
        value = self.value
        if isinstance(value, str) and len(value) > MODAL_CHARS:  # the full text is in `completions`
            value = value[: MODAL_CHARS - 1] + "…"
        return {"value": value, "count": self.count, "n": self.n}


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
    # change against a narrow majority flipping by chance.
    test: DropTest | None

    @property
    def differs(self) -> bool:
        return self.now is not None and self.before is not None and not same_value(self.now.value, self.before.value)

    @property
    def changed(self) -> bool:
        """Both runs had a majority answer, and they differ."""
        now, before = self.now, self.before
        return now is not None and before is not None and now.majority and before.majority and self.differs


@dataclass(frozen=True)
class MeaningChange:
    """How close the modal completion stays in meaning to the baseline's."""

    cosine: float | None  # None without a similarity model, or without completions
    checked: bool  # both runs had a majority meaning, so their modal texts can be compared


@dataclass(frozen=True)
class FingerprintChange:
    now: tuple[str, ...]
    before: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.now and self.before) and set(self.now) != set(self.before)


@dataclass(frozen=True)
class Deltas:
    """Current minus baseline, for the report's table."""

    unique_completions: int | None
    agreement: float | None
    cosine_min: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "unique_completions": self.unique_completions,
            "agreement": _rounded(self.agreement),
            "cosine_min": _rounded(self.cosine_min),
        }


@dataclass(frozen=True)
class Comparison:
    """Everything measured about a case against its baseline entry, before Holm's correction."""

    baseline_hash: str
    agreement: AgreementChange
    modal: ModalChange
    meaning: MeaningChange
    fingerprints: FingerprintChange
    deltas: Deltas
    baseline_metrics: dict[str, Any]

    @property
    def p_value(self) -> float | None:
        return self.agreement.test.p_value if self.agreement.test is not None else None

    @property
    def answer_p_value(self) -> float | None:
        return self.modal.test.p_value if self.modal.test is not None else None

    def to_json(self) -> dict[str, Any]:
        """The part of the report's `baseline` mapping that does not depend on Holm."""
        a, current = self.agreement, self.agreement.current
        return {
            "status": "compared",
            "hash": self.baseline_hash,
            "metric": current.metric if current else None,
            "k": current.k if current else None,
            "n": current.n if current else None,
            "baseline_k": a.baseline_k,
            "baseline_n": a.baseline_n,
            "test": a.test.test if a.test else None,
            "p_value": _rounded(self.p_value),
            "drop": _rounded(a.drop),
            "kind": self.modal.kind,
            "modal": self.modal.now.to_json() if self.modal.now else None,
            "baseline_modal": self.modal.before.to_json() if self.modal.before else None,
            "modal_cosine": _rounded(self.meaning.cosine),
            "drift_checked": self.meaning.checked,
            "fingerprints": list(self.fingerprints.now),
            "baseline_fingerprints": list(self.fingerprints.before),
            "fingerprints_changed": self.fingerprints.changed,
            "answer_p_value": _rounded(self.answer_p_value),
            "metrics": {k: self.baseline_metrics.get(k) for k in sorted(self.baseline_metrics)},
            "deltas": self.deltas.to_json(),
        }


def compare_case(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    primary: Agreement | None,
    *,
    similarity: Similarity | None = None,
) -> Comparison:
    """Measure the case against its entry: `primary` is its primary agreement now."""
    agreement = _agreement_change(entry, primary)
    return Comparison(
        baseline_hash=entry.hash,
        agreement=agreement,
        modal=_modal_change("answer" if case.answer is not None else "completion", m, entry),
        meaning=MeaningChange(_modal_cosine(m, entry, similarity), _drift_checkable(m, entry)),
        fingerprints=FingerprintChange(_fingerprints(m.fingerprints), _fingerprints(entry.fingerprints)),
        deltas=_deltas(m, entry, agreement),
        baseline_metrics=entry.metrics,
    )


def _agreement_change(entry: BaselineCase, current: Agreement | None) -> AgreementChange:
    if current is None:
        return AgreementChange(None, None, None, None)
    recorded = entry.primary
    if recorded is not None and recorded["metric"] == current.metric:
        k, n = int(recorded["k"]), int(recorded["n"])
        return AgreementChange(current, k, n, drop_test(k, n, current.k, current.n) if n else None)
    value = entry.metrics.get(current.metric)
    if value is None or entry.samples <= 0:
        return AgreementChange(current, None, None, None)
    # Another primary metric was recorded, but the baseline measured this one too: compare on it.
    k, n = round(float(value) * entry.samples), entry.samples
    note = (
        f"compared on {current.metric}: the baseline's primary metric was "
        f"{recorded['metric'] if recorded else 'nothing'} (was the semantic layer switched on or off?)"
    )
    return AgreementChange(current, k, n, drop_test(k, n, current.k, current.n), note)


def _modal_change(kind: ModalKind, m: CaseMeasurement, entry: BaselineCase) -> ModalChange:
    key = "answer" if kind == "answer" else "text"
    rows_now = m.answers if kind == "answer" else m.completions
    rows_before = entry.answers if kind == "answer" else entry.completions
    now = _modal(rows_now, key, m.samples_ok)
    before = _modal(rows_before, key, entry.samples)
    test = None
    if before is not None and m.samples_ok > 0:
        still = next((int(r["count"]) for r in rows_now if same_value(r[key], before.value)), 0)
        test = drop_test(before.count, before.n, still, m.samples_ok)
    return ModalChange(kind, now, before, test)


def _modal(rows: list[dict[str, Any]], key: str, n: int) -> Modal | None:
    if not rows or n <= 0:
        return None
    return Modal(rows[0][key], int(rows[0]["count"]), n)


def _modal_cosine(m: CaseMeasurement, entry: BaselineCase, similarity: Similarity | None) -> float | None:
    """Cosine of the two modal completions; identical texts need no model."""
    text_now = m.completions[0]["text"] if m.completions else None
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


def _majority_meaning(metrics: dict[str, Any], n: int, completions: list[dict[str, Any]]) -> bool:
    semantic = metrics.get("semantic_agreement")
    if semantic is not None:
        return float(semantic) > 0.5
    return bool(completions) and n > 0 and int(completions[0]["count"]) * 2 > n


def _fingerprints(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(sorted(str(f["fingerprint"]) for f in rows if f.get("fingerprint")))


def _deltas(m: CaseMeasurement, entry: BaselineCase, agreement: AgreementChange) -> Deltas:
    unique = _difference(m.metrics.get("unique_completions"), entry.metrics.get("unique_completions"))
    current, before = agreement.current, agreement.before
    return Deltas(
        unique_completions=int(round_float(unique)) if unique is not None else None,
        agreement=current.value - before if current is not None and before is not None else None,
        cosine_min=_difference(m.metrics.get("cosine_min"), entry.metrics.get("cosine_min")),
    )


def _difference(now: Any, before: Any) -> float | None:
    if now is None or before is None:
        return None
    return float(now) - float(before)


# --- what it means, once Holm's correction is known ----------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One sentence of a case's reasons; `regression` sentences make the case regress."""

    sentence: str
    regression: bool = False


@dataclass(frozen=True)
class Conclusion:
    comparison: Comparison
    p_holm: float | None
    answer_p_holm: float | None
    family: int  # how many cases shared the drop test's Holm family
    findings: tuple[Finding, ...]  # in the order they are told
    dropped: bool
    semantic_drift: bool

    @property
    def regressed(self) -> bool:
        return any(f.regression for f in self.findings)

    @property
    def reasons(self) -> list[str]:
        """Regressions first, then the informative rest."""
        regressions = [f.sentence for f in self.findings if f.regression]
        return regressions + [f.sentence for f in self.findings if not f.regression]

    def to_json(self) -> dict[str, Any]:
        """The report's `baseline` mapping of a compared case."""
        return {
            **self.comparison.to_json(),
            "p_holm": _rounded(self.p_holm),
            "holm_family": self.family,
            "dropped": self.dropped,
            "answer_changed": self.comparison.modal.changed,
            "answer_p_holm": _rounded(self.answer_p_holm),
            "semantic_drift": self.semantic_drift,
        }


def conclude(
    c: Comparison,
    p_holm: float | None,
    regression: Regression,
    *,
    cluster_cosine: float,
    family: int,
    answer_p_holm: float | None = None,
) -> Conclusion:
    """Decide the case once its Holm-corrected p-values are known; every reason carries numbers."""
    note = Finding(c.agreement.note) if c.agreement.note is not None else None
    agreement = _agreement_finding(c.agreement, p_holm, regression)
    modal = _modal_finding(c.modal, answer_p_holm, regression)
    meaning = _meaning_finding(c.meaning, cluster_cosine, regression)
    fingerprints = _fingerprint_finding(c.fingerprints)
    found = (note, agreement, modal, meaning, fingerprints)
    return Conclusion(
        comparison=c,
        p_holm=p_holm,
        answer_p_holm=answer_p_holm,
        family=family,
        findings=tuple(f for f in found if f is not None),
        dropped=agreement is not None and agreement.regression,
        semantic_drift=meaning is not None and meaning.regression,
    )


def _agreement_finding(a: AgreementChange, p_holm: float | None, regression: Regression) -> Finding | None:
    """The drop test's sentence: a regression when significant after Holm and at least min_drop."""
    current, drop = a.current, a.drop
    if current is None:
        return None
    if a.test is None or drop is None:
        return Finding(f"{current.label} {current.k}/{current.n}: the baseline has no value to compare with")
    head = f"{current.label} {current.k}/{current.n} against {a.baseline_k}/{a.baseline_n} in the baseline"
    holm_p = a.test.p_value if p_holm is None else p_holm  # no Holm family: the raw p stands
    significant = holm_p < regression.alpha
    if drop <= EPSILON:
        return Finding(f"{head}: no drop" if -drop <= EPSILON else f"{head}: up {-drop:.2f}")
    if significant and drop >= regression.min_drop - EPSILON:
        return Finding(f"{head}: a drop of {drop:.2f}, {p_after_and_before_holm(holm_p, a.test.p_value)}", True)
    if significant:
        return Finding(
            f"{head}: a drop of {drop:.2f}, significant ({p_after_holm(holm_p)}) but smaller than "
            f"min_drop {regression.min_drop:.2f}"
        )
    return Finding(f"{head}: a drop of {drop:.2f}, not significant ({p_after_holm(holm_p)})")


def _modal_finding(modal: ModalChange, answer_p_holm: float | None, regression: Regression) -> Finding | None:
    """An answer change regresses when both runs had a majority, the rule is on and the old answer
    is significantly rarer now; otherwise it is told, not failed."""
    now, before, kind = modal.now, modal.before, modal.kind
    if now is None or before is None or not modal.differs:
        return None
    if not modal.changed:
        return Finding(
            f"the most common {kind} is now {now.shown} where the baseline had {before.shown}: "
            f"not a majority in both runs, so not an {kind} change"
        )
    sentence = f"{kind} changed: {now.shown} where the baseline had {before.shown}"
    held = "" if answer_p_holm is None else f", {p_after_holm(answer_p_holm)}"
    if not regression.fail_on_answer_change:
        return Finding(f"{sentence}: reported, not failed (fail_on_answer_change is off)")
    if answer_p_holm is not None and answer_p_holm < regression.alpha:
        return Finding(f"{sentence}{held}", True)
    return Finding(
        f"{sentence}: the baseline's {kind} is not significantly rarer now{held}, "
        "so a narrow majority flipping by chance is reported, not failed"
    )


def _meaning_finding(meaning: MeaningChange, cluster_cosine: float, regression: Regression) -> Finding | None:
    """Semantic drift: the modal completion's cosine to the baseline's below the clustering bar."""
    if meaning.cosine is None or meaning.cosine >= cluster_cosine - EPSILON:
        return None
    sentence = (
        f"the most common completion moved in meaning: cosine {meaning.cosine:.3f} to the baseline's, "
        f"below {cluster_cosine:.2f}"
    )
    if not meaning.checked:
        return Finding(f"{sentence}; not both runs have one majority meaning, so it is not counted as drift")
    if regression.fail_on_semantic_drift:
        return Finding(sentence, True)
    return Finding(f"{sentence}: reported, not failed (fail_on_semantic_drift is off)")


def _fingerprint_finding(fingerprints: FingerprintChange) -> Finding | None:
    if not fingerprints.changed:
        return None
    return Finding(
        f"system_fingerprint changed: {', '.join(fingerprints.now)} where the baseline had "
        f"{', '.join(fingerprints.before)} (the provider changed its backend; reported, not failed)"
    )
