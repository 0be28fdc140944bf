"""One case against its baseline entry: the drop test, the answer change, semantic drift.

Comparing is split in two because Holm needs the raw p-values of every compared case before any
case can be judged: `compare_case` measures, `conclude` decides once the corrected p is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stabilitygate.judge.baseline import BaselineCase
from stabilitygate.judge.stats import DropTest, drop_test
from stabilitygate.judge.thresholds import EPSILON, Agreement, primary_agreement
from stabilitygate.judge.wording import p_phrase, same_value, show
from stabilitygate.results import REPORT_DECIMALS, CaseMeasurement
from stabilitygate.suite.model import Regression, ResolvedCase

Similarity = Callable[[str, str], float]
MODAL_CHARS = 300  # of a modal completion kept in the comparison data


@dataclass(frozen=True)
class Modal:
    """The most common answer (or completion) of a run and how many samples gave it."""

    value: Any
    count: int
    n: int

    @property
    def majority(self) -> bool:
        return self.count * 2 > self.n


@dataclass(frozen=True)
class Comparison:
    current: Agreement | None
    baseline_k: int | None  # baseline counts of the same metric as `current`
    baseline_n: int | None
    test: DropTest | None
    kind: str  # "answer" with a parser, else "completion"
    modal_now: Modal | None
    modal_before: Modal | None
    modal_cosine: float | None
    drift_checked: bool  # both runs had a majority meaning, so their modal texts can be compared
    fingerprints_now: list[str]
    fingerprints_before: list[str]
    data: dict[str, Any]  # the plain-data part that does not depend on Holm
    # Is the baseline's modal answer (or completion) significantly rarer now? Guards the answer
    # change against a narrow majority flipping by chance.
    answer_test: DropTest | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def p_value(self) -> float | None:
        return self.test.p_value if self.test is not None else None

    @property
    def answer_p_value(self) -> float | None:
        return self.answer_test.p_value if self.answer_test is not None else None

    @property
    def answer_changed(self) -> bool:
        now, before = self.modal_now, self.modal_before
        return (
            now is not None
            and before is not None
            and now.majority
            and before.majority
            and not same_value(now.value, before.value)
        )


@dataclass(frozen=True)
class Conclusion:
    regressed: bool
    reasons: list[str]  # regressions first, then the informative rest
    data: dict[str, Any]


def compare_case(
    case: ResolvedCase,
    m: CaseMeasurement,
    entry: BaselineCase,
    *,
    similarity: Similarity | None = None,
) -> Comparison:
    notes: list[str] = []
    current = primary_agreement(case, m)
    baseline_k, baseline_n = _baseline_counts(entry, current, notes)
    test = None
    if current is not None and baseline_k is not None and baseline_n:
        test = drop_test(baseline_k, baseline_n, current.k, current.n)

    kind = "answer" if case.answer is not None else "completion"
    if kind == "answer":
        modal_now = _modal(m.answers, "answer", m.samples_ok)
        modal_before = _modal(entry.answers, "answer", entry.samples)
    else:
        modal_now = _modal(m.completions, "text", m.samples_ok)
        modal_before = _modal(entry.completions, "text", entry.samples)

    answer_test = None
    if modal_before is not None and m.samples_ok > 0:
        key = "answer" if kind == "answer" else "text"
        rows = m.answers if kind == "answer" else m.completions
        still = next((int(r["count"]) for r in rows if same_value(r[key], modal_before.value)), 0)
        answer_test = drop_test(modal_before.count, modal_before.n, still, m.samples_ok)

    text_now = m.completions[0]["text"] if m.completions else None
    text_before = entry.modal_completion
    modal_cosine = None
    if text_now is not None and text_before is not None:
        if text_now == text_before:
            modal_cosine = 1.0
        elif similarity is not None:
            modal_cosine = float(similarity(text_now, text_before))
    # The modal completion stands for the run's meaning only when one meaning holds a majority;
    # in a run of scattered completions it is an arbitrary pick, and comparing two arbitrary picks
    # would cry wolf on every run of a free-text case.
    drift_checked = _majority_meaning(m.metrics, m.samples_ok, m.completions) and _majority_meaning(
        entry.metrics, entry.samples, entry.completions
    )

    fingerprints_now = sorted(str(f["fingerprint"]) for f in m.fingerprints if f.get("fingerprint"))
    fingerprints_before = sorted(str(f["fingerprint"]) for f in entry.fingerprints if f.get("fingerprint"))

    data: dict[str, Any] = {
        "status": "compared",
        "hash": entry.hash,
        "metric": current.metric if current else None,
        "k": current.k if current else None,
        "n": current.n if current else None,
        "baseline_k": baseline_k,
        "baseline_n": baseline_n,
        "test": test.test if test else None,
        "p_value": _round(test.p_value) if test else None,
        "drop": _round(baseline_k / baseline_n - current.value) if test and current and baseline_n else None,
        "kind": kind,
        "modal": _modal_json(modal_now),
        "baseline_modal": _modal_json(modal_before),
        "modal_cosine": _round(modal_cosine) if modal_cosine is not None else None,
        "drift_checked": drift_checked,
        "fingerprints": fingerprints_now,
        "baseline_fingerprints": fingerprints_before,
        "fingerprints_changed": bool(fingerprints_now and fingerprints_before)
        and set(fingerprints_now) != set(fingerprints_before),
        "answer_p_value": _round(answer_test.p_value) if answer_test else None,
        "metrics": {k: entry.metrics.get(k) for k in sorted(entry.metrics)},
        "deltas": _deltas(m, entry, current, baseline_k, baseline_n),
    }
    return Comparison(
        current=current,
        baseline_k=baseline_k,
        baseline_n=baseline_n,
        test=test,
        kind=kind,
        modal_now=modal_now,
        modal_before=modal_before,
        modal_cosine=modal_cosine,
        drift_checked=drift_checked,
        fingerprints_now=fingerprints_now,
        fingerprints_before=fingerprints_before,
        data=data,
        notes=notes,
        answer_test=answer_test,
    )


def conclude(
    c: Comparison,
    p_holm: float | None,
    regression: Regression,
    *,
    cluster_cosine: float,
    family: int,
    answer_p_holm: float | None = None,
) -> Conclusion:
    """Decide the case once its Holm-corrected p-value is known; every reason carries numbers."""
    regressions: list[str] = []
    info: list[str] = list(c.notes)
    dropped = False
    if c.current is not None and c.test is not None and c.baseline_k is not None and c.baseline_n:
        before = f"{c.baseline_k}/{c.baseline_n}"
        head = f"{c.current.label} {c.current.k}/{c.current.n} against {before} in the baseline"
        drop = c.baseline_k / c.baseline_n - c.current.value
        raw = c.test.p_value
        holm_p = raw if p_holm is None else p_holm
        significant = holm_p < regression.alpha
        if drop <= EPSILON:
            rise = -drop
            info.append(f"{head}: no drop" if rise <= EPSILON else f"{head}: up {rise:.2f}")
        elif significant and drop >= regression.min_drop - EPSILON:
            dropped = True
            before_holm = p_phrase(raw, bare=True)
            regressions.append(f"{head}: a drop of {drop:.2f}, {p_phrase(holm_p)} after Holm ({before_holm} before)")
        elif significant:
            info.append(
                f"{head}: a drop of {drop:.2f}, significant ({p_phrase(holm_p)} after Holm) but smaller than "
                f"min_drop {regression.min_drop:.2f}"
            )
        else:
            info.append(f"{head}: a drop of {drop:.2f}, not significant ({p_phrase(holm_p)} after Holm)")
    elif c.current is not None:
        info.append(f"{c.current.label} {c.current.k}/{c.current.n}: the baseline has no value to compare with")

    significant = answer_p_holm is not None and answer_p_holm < regression.alpha
    changed = c.answer_changed and regression.fail_on_answer_change and significant
    if c.answer_changed and c.modal_now is not None and c.modal_before is not None:
        sentence = (
            f"{c.kind} changed: {show(c.modal_now.value)} ({c.modal_now.count}/{c.modal_now.n}) where the "
            f"baseline had {show(c.modal_before.value)} ({c.modal_before.count}/{c.modal_before.n})"
        )
        held = "" if answer_p_holm is None else f", {p_phrase(answer_p_holm)} after Holm"
        if changed:
            regressions.append(f"{sentence}{held}")
        elif not regression.fail_on_answer_change:
            info.append(f"{sentence}: reported, not failed (fail_on_answer_change is off)")
        else:
            info.append(
                f"{sentence}: the baseline's {c.kind} is not significantly rarer now{held}, "
                "so a narrow majority flipping by chance is reported, not failed"
            )
    elif (
        c.modal_now is not None
        and c.modal_before is not None
        and not same_value(c.modal_now.value, c.modal_before.value)
    ):
        info.append(
            f"the most common {c.kind} is now {show(c.modal_now.value)} ({c.modal_now.count}/{c.modal_now.n}) "
            f"where the baseline had {show(c.modal_before.value)} "
            f"({c.modal_before.count}/{c.modal_before.n}): not a majority in both runs, so not an "
            f"{c.kind} change"
        )

    drifted = False
    if c.modal_cosine is not None and c.modal_cosine < cluster_cosine - EPSILON:
        sentence = (
            f"the most common completion moved in meaning: cosine {c.modal_cosine:.3f} to the baseline's, "
            f"below {cluster_cosine:.2f}"
        )
        if not c.drift_checked:
            info.append(f"{sentence}; not both runs have one majority meaning, so it is not counted as drift")
        elif regression.fail_on_semantic_drift:
            drifted = True
            regressions.append(sentence)
        else:
            info.append(f"{sentence}: reported, not failed (fail_on_semantic_drift is off)")

    if c.data["fingerprints_changed"]:
        info.append(
            f"system_fingerprint changed: {', '.join(c.fingerprints_now)} where the baseline had "
            f"{', '.join(c.fingerprints_before)} (the provider changed its backend; reported, not failed)"
        )

    data = {
        **c.data,
        "p_holm": _round(p_holm) if p_holm is not None else None,
        "holm_family": family,
        "dropped": dropped,
        "answer_changed": c.answer_changed,
        "answer_p_holm": _round(answer_p_holm) if answer_p_holm is not None else None,
        "semantic_drift": drifted,
    }
    return Conclusion(regressed=bool(regressions), reasons=regressions + info, data=data)


# --- helpers ------------------------------------------------------------------------------------


def _baseline_counts(entry: BaselineCase, current: Agreement | None, notes: list[str]) -> tuple[int | None, int | None]:
    """The baseline's k/n for the current run's primary metric."""
    if current is None:
        return None, None
    primary = entry.primary
    if primary is not None and primary["metric"] == current.metric:
        return int(primary["k"]), int(primary["n"])
    value = entry.metrics.get(current.metric)
    if value is None or entry.samples <= 0:
        return None, None
    recorded = primary["metric"] if primary else "nothing"
    notes.append(
        f"compared on {current.metric}: the baseline's primary metric was {recorded} "
        "(was the semantic layer switched on or off?)"
    )
    return round(float(value) * entry.samples), entry.samples


def _modal(rows: list[dict[str, Any]], key: str, n: int) -> Modal | None:
    if not rows or n <= 0:
        return None
    return Modal(rows[0][key], int(rows[0]["count"]), n)


def _modal_json(modal: Modal | None) -> dict[str, Any] | None:
    if modal is None:
        return None
    value = modal.value
    if isinstance(value, str) and len(value) > MODAL_CHARS:  # the full text is in `completions`
        value = value[: MODAL_CHARS - 1] + "…"
    return {"value": value, "count": modal.count, "n": modal.n}


def _majority_meaning(metrics: dict[str, Any], n: int, completions: list[dict[str, Any]]) -> bool:
    semantic = metrics.get("semantic_agreement")
    if semantic is not None:
        return float(semantic) > 0.5
    return bool(completions) and n > 0 and int(completions[0]["count"]) * 2 > n


def _deltas(
    m: CaseMeasurement,
    entry: BaselineCase,
    current: Agreement | None,
    baseline_k: int | None,
    baseline_n: int | None,
) -> dict[str, Any]:
    def diff(now: Any, before: Any) -> float | None:
        if now is None or before is None:
            return None
        return _round(float(now) - float(before))

    agreement = None
    if current is not None and baseline_k is not None and baseline_n:
        agreement = _round(current.value - baseline_k / baseline_n)
    unique = diff(m.metrics.get("unique_completions"), entry.metrics.get("unique_completions"))
    return {
        "unique_completions": int(unique) if unique is not None else None,
        "agreement": agreement,
        "cosine_min": diff(m.metrics.get("cosine_min"), entry.metrics.get("cosine_min")),
    }


def _round(value: float) -> float:
    rounded = round(float(value), REPORT_DECIMALS)
    return 0.0 if rounded == 0 else rounded
