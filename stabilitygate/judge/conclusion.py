"""What a case's comparison means once Holm's correction is known: its findings and report mapping.

`conclude` turns a `Comparison` (judge.compare) and its Holm-corrected p-values into the sentences
of the case's reasons, each carrying its numbers, and into the report's `baseline` mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stabilitygate.judge.compare import AgreementChange, Comparison, FingerprintChange, MeaningChange, ModalChange
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import p_after_and_before_holm, p_after_holm
from stabilitygate.plain import round_optional
from stabilitygate.suite.model import Regression


@dataclass(frozen=True)
class Finding:
    """One sentence of a case's reasons; `regression` sentences make the case regress."""

    sentence: str
    regression: bool = False


@dataclass(frozen=True)
class Conclusion:
    """A compared case decided: its corrected p-values and its findings."""

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
            "p_holm": round_optional(self.p_holm),
            "holm_family": self.family,
            "dropped": self.dropped,
            "answer_changed": self.comparison.modal.changed,
            "answer_p_holm": round_optional(self.answer_p_holm),
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
