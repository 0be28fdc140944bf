"""What a case's comparison means once Holm's correction is known: its findings and report record.

`conclude` turns a `Comparison` (judge.compare) and its Holm-corrected p-values into the sentences
of the case's reasons, each carrying its numbers; `Conclusion.record` into the report's `Compared`.
"""

from __future__ import annotations

from dataclasses import dataclass

from stabilitygate.against_baseline import Compared
from stabilitygate.judge.compare import AgreementChange, Comparison, FingerprintChange, MeaningChange, ModalChange
from stabilitygate.judge.stages import StageFacts
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import p_after_and_before_holm, p_after_holm, p_phrase
from stabilitygate.suite.model import Regression


@dataclass(frozen=True)
class Finding:
    """One sentence of a case's reasons; `regression` sentences make the case regress, `warning`
    sentences (a change that would regress if it were significant) make it warn."""

    sentence: str
    regression: bool = False
    warning: bool = False


@dataclass(frozen=True)
class Conclusion:
    """A compared case decided: its corrected p-values and its findings."""

    comparison: Comparison
    p_holm: float | None
    answer_p_holm: float | None
    meaning_p_holm: float | None
    family: int  # how many tests shared the run's Holm family (every rule of every compared case)
    findings: tuple[Finding, ...]  # in the order they are told
    dropped: bool
    semantic_drift: bool

    @property
    def regressed(self) -> bool:
        return any(f.regression for f in self.findings)

    @property
    def warned(self) -> bool:
        return any(f.warning for f in self.findings)

    @property
    def reasons(self) -> list[str]:
        """Regressions first, then warnings, then the informative rest."""
        first = [f.sentence for f in self.findings if f.regression]
        second = [f.sentence for f in self.findings if f.warning and not f.regression]
        return first + second + [f.sentence for f in self.findings if not (f.regression or f.warning)]

    def record(self, stage: StageFacts | None) -> Compared:
        """The report's record of the compared case (its `baseline` key)."""
        c, a, current = self.comparison, self.comparison.agreement, self.comparison.agreement.current
        return Compared(
            hash=c.baseline_hash,
            metric=current.metric if current else None,
            k=current.k if current else None,
            n=current.n if current else None,
            baseline_k=a.baseline_k,
            baseline_n=a.baseline_n,
            test=a.test.test if a.test else None,
            p_value=c.p_value,
            p_holm=self.p_holm,
            drop=a.drop,
            dropped=self.dropped,
            holm_family=self.family,
            kind=c.modal.kind,
            modal=c.modal.now.shown_in_report() if c.modal.now else None,
            baseline_modal=c.modal.before.shown_in_report() if c.modal.before else None,
            answer_changed=c.modal.changed,
            answer_p_value=c.answer_p_value,
            answer_p_holm=self.answer_p_holm,
            modal_cosine=c.meaning.cosine,
            drift_checked=c.meaning.checked,
            semantic_drift=self.semantic_drift,
            meaning_p_value=c.meaning_p_value,
            meaning_p_holm=self.meaning_p_holm,
            fingerprints=c.fingerprints.now,
            baseline_fingerprints=c.fingerprints.before,
            fingerprints_changed=c.fingerprints.changed,
            warned=self.warned,
            regressed=self.regressed,
            metrics=c.baseline_metrics,
            deltas=c.deltas,
            stage=stage.stage if stage else None,
            stages=stage.sizes if stage else None,
            detectable_drop=stage.detectable_drop if stage else None,
            power_level=stage.power_level if stage else None,
            suite_baseline_samples=stage.suite_baseline_samples if stage else None,
        )


def conclude(
    c: Comparison,
    regression: Regression,
    *,
    holm: HolmValues,
    family: int,
) -> Conclusion:
    """Decide the case once its Holm-corrected p-values are known; every reason carries numbers."""
    note = Finding(c.agreement.note) if c.agreement.note is not None else None
    agreement = _agreement_finding(c.agreement, holm.drop, regression)
    modal = _modal_finding(c.modal, holm.answer, regression)
    meaning = _meaning_finding(c.meaning, holm.meaning, regression)
    fingerprints = _fingerprint_finding(c.fingerprints)
    found = (note, agreement, modal, meaning, fingerprints)
    return Conclusion(
        comparison=c,
        p_holm=holm.drop,
        answer_p_holm=holm.answer,
        meaning_p_holm=holm.meaning,
        family=family,
        findings=tuple(f for f in found if f is not None),
        dropped=agreement is not None and agreement.regression,
        semantic_drift=meaning is not None and meaning.regression,
    )


@dataclass(frozen=True)
class HolmValues:
    """A case's p-values after the run's Holm correction, one per rule (None: the rule has no test)."""

    drop: float | None = None
    answer: float | None = None
    meaning: float | None = None


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
    sentence = f"{head}: a drop of {drop:.2f}, not significant ({p_after_holm(holm_p)})"
    # A warning: a drop that counts (min_drop) and would be significant on its own, but not after the
    # run's correction. A noise-sized drop is told, not flagged: at N = 20, min_drop is two samples.
    if drop >= regression.min_drop - EPSILON and a.test.p_value < regression.alpha:
        return Finding(f"{sentence}, {p_phrase(a.test.p_value)} before: a warning, not a failure", warning=True)
    return Finding(sentence)


def _modal_finding(modal: ModalChange, answer_p_holm: float | None, regression: Regression) -> Finding | None:
    """An answer change regresses when both runs had a majority, the rule is on and the old answer
    is significantly rarer now; otherwise it is told, not failed."""
    now, before, kind = modal.now, modal.before, modal.kind
    if now is None or before is None or not modal.differs:
        return None
    if modal.by_meaning:
        return Finding(
            f"the most common completion is now {now.shown} where the baseline had {before.shown}: "
            "judged by its meaning, not its wording"
        )
    if not modal.changed:
        return Finding(
            f"the most common {kind} is now {now.shown} where the baseline had {before.shown}: "
            f"not a majority in both runs, so not an {kind} change"
        )
    sentence = f"{kind} changed: {now.shown} where the baseline had {before.shown}"
    if not regression.fail_on_answer_change:
        return Finding(f"{sentence}: reported, not failed (fail_on_answer_change is off)")
    return _guarded(sentence, kind, answer_p_holm, regression.alpha)


def _meaning_finding(meaning: MeaningChange, meaning_p_holm: float | None, regression: Regression) -> Finding | None:
    """Semantic drift: the modal completion means something else than the baseline's, both runs had one
    majority meaning, and the baseline's meaning is significantly rarer now (the answer change's guard)."""
    if not meaning.moved:
        return None
    cosine = f"cosine {meaning.cosine:.3f} to the baseline's" if meaning.cosine is not None else "judged"
    sentence = f"the most common completion moved in meaning ({cosine})"
    if not meaning.checked:
        return Finding(f"{sentence}; not both runs have one majority meaning, so it is not counted as drift")
    if not regression.fail_on_semantic_drift:
        return Finding(f"{sentence}: reported, not failed (fail_on_semantic_drift is off)")
    return _guarded(sentence, "meaning", meaning_p_holm, regression.alpha)


def _guarded(sentence: str, what: str, p_holm: float | None, alpha: float) -> Finding:
    """An answer change or a meaning drift decided by its guard: the baseline's `what` significantly
    rarer now regresses the case; otherwise a narrow majority may have flipped by chance: a warning."""
    held = "" if p_holm is None else f", {p_after_holm(p_holm)}"
    if p_holm is not None and p_holm < alpha:
        return Finding(f"{sentence}: the baseline's {what} is significantly rarer now{held}", True)
    return Finding(
        f"{sentence}: the baseline's {what} is not significantly rarer now{held}, "
        "so a narrow majority flipping by chance is a warning, not a failure",
        warning=True,
    )


def _fingerprint_finding(fingerprints: FingerprintChange) -> Finding | None:
    if not fingerprints.changed:
        return None
    return Finding(
        f"system_fingerprint changed: {', '.join(fingerprints.now)} where the baseline had "
        f"{', '.join(fingerprints.before)} (the provider changed its backend; reported, not failed)"
    )
