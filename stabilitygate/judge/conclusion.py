"""What a case's comparison means once the run's correction is known: its findings and report record.

`conclude` turns a `Comparison` (judge.compare), its test's own p-values and the corrected ones
(judge.family) into the sentences of the case's reasons, each carrying its numbers; `Conclusion.record`
into the report's `Compared`.

A rule regresses the case when its corrected p-value is below alpha and its change is one that counts
(a drop of at least `min_drop`; an answer or meaning that changed while both runs held a majority). It
warns when that change is there and its corrected p-value is below WARN_FACTOR x alpha: the family's
own procedure at twice alpha would fail it, so at most 2 alpha of the runs in which nothing changed
warn or fail, on any suite (docs/design.md §6, "Warnings"). A change with less evidence (a narrow
majority flipping by chance) is told in the reasons, never flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

from stabilitygate.against_baseline import Compared
from stabilitygate.judge.case_test import CaseTest, Rule
from stabilitygate.judge.compare import (
    AgreementChange,
    Comparison,
    FingerprintChange,
    MeaningChange,
    ModalChange,
    Share,
)
from stabilitygate.judge.family import Adjusted, CaseOutcome
from stabilitygate.judge.stages import StageFacts
from stabilitygate.judge.thresholds import EPSILON
from stabilitygate.judge.wording import p_corrected, p_corrected_and_own, p_phrase
from stabilitygate.suite.model import Regression


@dataclass(frozen=True)
class Finding:
    """One sentence of a case's reasons; `regression` sentences make the case regress, `warning`
    sentences (a change with evidence the family does not confirm) make it warn."""

    sentence: str
    regression: bool = False
    warning: bool = False


#: A change warns when its corrected p-value is below this many times alpha (and not below alpha).
WARN_FACTOR = 2


@dataclass(frozen=True)
class Judged:
    """A rule's p-values: its own, and after the run's correction (None when the case was not tested)."""

    own: float | None
    corrected: float | None
    untestable: bool = False  # the runs hold one answer between them: no split differs

    def significant(self, alpha: float) -> bool:
        return self.corrected is not None and self.corrected < alpha

    def evidence(self, alpha: float) -> bool:
        """What a warning needs: the family at WARN_FACTOR x alpha would fail it."""
        return self.corrected is not None and self.corrected < WARN_FACTOR * alpha


@dataclass(frozen=True)
class Conclusion:
    """A compared case decided: its test, its corrected p-values and its findings."""

    comparison: Comparison
    outcome: CaseOutcome | None
    family: int  # how many cases were tested in the run's family
    findings: tuple[Finding, ...]  # in the order they are told
    dropped: bool
    semantic_drift: bool
    parsed_dropped: bool

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

    def judged(self, rule: Rule) -> Judged:
        return _judged(self.outcome, rule)

    def record(self, stage: StageFacts | None) -> Compared:
        """The report's record of the compared case (its `baseline` key)."""
        c, a, current = self.comparison, self.comparison.agreement, self.comparison.agreement.current
        guard = self.judged("meaning" if c.modal.by_meaning else "answer")
        parsed, parsed_p = c.parsed, self.judged("parsed")
        return Compared(
            hash=c.baseline_hash,
            metric=current.metric if current else None,
            k=current.k if current else None,
            n=current.n if current else None,
            baseline_k=a.baseline_k,
            baseline_n=a.baseline_n,
            test="permutation" if self.outcome is not None and a.compared else None,
            p_value=self.judged("drop").own,
            p_adjusted=self.judged("drop").corrected,
            drop=a.drop,
            dropped=self.dropped,
            family_size=self.family,
            kind=c.modal.kind,
            modal=c.modal.now.shown_in_report() if c.modal.now else None,
            baseline_modal=c.modal.before.shown_in_report() if c.modal.before else None,
            answer_changed=c.modal.changed,
            answer_p_value=None if c.modal.by_meaning else guard.own,
            answer_p_adjusted=None if c.modal.by_meaning else guard.corrected,
            modal_cosine=c.meaning.cosine,
            drift_checked=c.meaning.checked,
            semantic_drift=self.semantic_drift,
            meaning_p_value=guard.own if c.modal.by_meaning else None,
            meaning_p_adjusted=guard.corrected if c.modal.by_meaning else None,
            parsed_k=parsed.k if parsed else None,
            parsed_n=parsed.n if parsed else None,
            baseline_parsed_k=parsed.baseline_k if parsed else None,
            baseline_parsed_n=parsed.baseline_n if parsed else None,
            parsed_p_value=parsed_p.own,
            parsed_p_adjusted=parsed_p.corrected,
            parsed_dropped=self.parsed_dropped,
            fingerprints=c.fingerprints.now,
            baseline_fingerprints=c.fingerprints.before,
            fingerprints_changed=c.fingerprints.changed,
            warned=self.warned,
            regressed=self.regressed,
            metrics=c.baseline_metrics,
            deltas=c.deltas,
            stage=stage.stage if stage else None,
            stages=stage.sizes if stage else None,
            tested=self.outcome is None or self.outcome.tested,
            detectable_drop=stage.detectable_drop if stage else None,
            power_level=stage.power_level if stage else None,
            suite_baseline_samples=stage.suite_baseline_samples if stage else None,
        )


def _judged(outcome: CaseOutcome | None, rule: Rule) -> Judged:
    """A rule's p-values; none for a case whose runs hold one answer between them (nothing to weigh)."""
    if outcome is None or rule not in outcome.test.rules:
        return Judged(None, None)
    if outcome.test.support == (1.0,):
        return Judged(None, None, untestable=True)
    return Judged(outcome.test.rules[rule].own, getattr(outcome.adjusted, rule))


def conclude(c: Comparison, regression: Regression, *, outcome: CaseOutcome | None, family: int) -> Conclusion:
    """Decide the case once its corrected p-values are known; every reason carries numbers."""
    stopped = outcome is not None and not outcome.tested
    note = Finding(c.agreement.note) if c.agreement.note is not None else None
    agreement = _agreement_finding(c.agreement, _judged(outcome, "drop"), regression, stopped=stopped)
    parsed = _parsed_finding(c.parsed, _judged(outcome, "parsed"), regression)
    modal = _modal_finding(c.modal, _judged(outcome, "answer"), regression)
    meaning = _meaning_finding(c.meaning, _judged(outcome, "meaning"), regression)
    fingerprints = _fingerprint_finding(c.fingerprints)
    found = (note, agreement, parsed, modal, meaning, fingerprints)
    return Conclusion(
        comparison=c,
        outcome=outcome,
        family=family,
        findings=tuple(f for f in found if f is not None),
        dropped=agreement is not None and agreement.regression,
        semantic_drift=meaning is not None and meaning.regression,
        parsed_dropped=parsed is not None and parsed.regression,
    )


def _agreement_finding(a: AgreementChange, p: Judged, regression: Regression, *, stopped: bool) -> Finding | None:
    """The primary agreement's sentence: a regression when significant after correction and at least min_drop."""
    current, drop = a.current, a.drop
    if current is None:
        return None
    if drop is None:
        return Finding(f"{current.label} {current.k}/{current.n}: the baseline has no value to compare with")
    head = f"{current.label} {current.k}/{current.n} against {a.baseline_k}/{a.baseline_n} in the baseline"
    if drop <= EPSILON:
        change = "no drop" if -drop <= EPSILON else f"up {-drop:.2f}"
        return Finding(f"{head}: {change}" + ("; stopped early: clearly unchanged" if stopped else ""))
    return _drop_finding(f"{head}: a drop of {drop:.2f}", drop, p, regression, stopped=stopped)


def _parsed_finding(parsed: Share | None, p: Judged, regression: Regression) -> Finding | None:
    """The parsed share's sentence, only when it fell: a drop judged like the agreement's (issue 26)."""
    if parsed is None or parsed.drop <= EPSILON:
        return None
    head = f"parsed {parsed.k}/{parsed.n} against {parsed.baseline_k}/{parsed.baseline_n} in the baseline"
    return _drop_finding(f"{head}: a drop of {parsed.drop:.2f} in the share that parsed", parsed.drop, p, regression)


def _drop_finding(head: str, drop: float, p: Judged, regression: Regression, *, stopped: bool = False) -> Finding:
    counts = drop >= regression.min_drop - EPSILON
    if p.untestable:
        return Finding(f"{head}; the runs hold one answer between them as the test aligns them: nothing to test")
    if p.corrected is None:
        why = "stopped early: clearly unchanged" if stopped else "not tested"
        own = f" ({p_phrase(p.own)} on its own)" if p.own is not None else ""
        return Finding(f"{head}, {why}{own}")
    if p.significant(regression.alpha) and counts:
        return Finding(f"{head}, {p_corrected_and_own(p.corrected, p.own or p.corrected)}", regression=True)
    if p.significant(regression.alpha):
        return Finding(
            f"{head}, significant ({p_corrected(p.corrected)}) but smaller than min_drop {regression.min_drop:.2f}"
        )
    sentence = f"{head}, {p_corrected_and_own(p.corrected, p.own or 1.0)}: not significant"
    if counts and p.evidence(regression.alpha):
        return Finding(f"{sentence}, {_warning(regression.alpha)}", warning=True)
    return Finding(sentence)


def _modal_finding(modal: ModalChange, p: Judged, regression: Regression) -> Finding | None:
    """An answer change regresses when both runs had a majority, the rule is on and the old answer
    is significantly rarer now after correction; otherwise it is told, and warned only with evidence."""
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
    return _guarded(sentence, kind, p, regression.alpha)


def _meaning_finding(meaning: MeaningChange, p: Judged, regression: Regression) -> Finding | None:
    """Semantic drift: the modal completion means something else than the baseline's, both runs had one
    majority meaning, and the baseline's meaning is significantly rarer now after correction."""
    if not meaning.moved:
        return None
    cosine = f"cosine {meaning.cosine:.3f} to the baseline's" if meaning.cosine is not None else "judged"
    sentence = f"the most common completion moved in meaning ({cosine})"
    if not meaning.checked:
        return Finding(f"{sentence}; not both runs have one majority meaning, so it is not counted as drift")
    if not regression.fail_on_semantic_drift:
        return Finding(f"{sentence}: reported, not failed (fail_on_semantic_drift is off)")
    return _guarded(sentence, "meaning", p, regression.alpha)


def _guarded(sentence: str, what: str, p: Judged, alpha: float) -> Finding:
    """An answer change or a meaning drift decided by its case's test: the baseline's `what`
    significantly rarer now regresses the case; rarer only on its own, a warning; else noise."""
    if p.corrected is None:
        return Finding(f"{sentence}: not tested (the case stopped early, clearly unchanged)")
    if p.significant(alpha):
        return Finding(
            f"{sentence}: the baseline's {what} is significantly rarer now, {p_corrected(p.corrected)}", True
        )
    if p.evidence(alpha):
        return Finding(
            f"{sentence}: the baseline's {what} is rarer now, {p_corrected_and_own(p.corrected, p.own or 1.0)}: "
            f"not significant, {_warning(alpha)}",
            warning=True,
        )
    return Finding(
        f"{sentence}: the baseline's {what} is not significantly rarer now, "
        f"{p_corrected_and_own(p.corrected, p.own or 1.0)}: a narrow majority flipping by chance"
    )


def _warning(alpha: float) -> str:
    return f"but below {WARN_FACTOR * alpha:g}: a warning, not a failure"


def _fingerprint_finding(fingerprints: FingerprintChange) -> Finding | None:
    if not fingerprints.changed:
        return None
    return Finding(
        f"system_fingerprint changed: {', '.join(fingerprints.now)} where the baseline had "
        f"{', '.join(fingerprints.before)} (the provider changed its backend; reported, not failed)"
    )


__all__ = ["Adjusted", "CaseTest", "Conclusion", "Finding", "Judged", "conclude"]
