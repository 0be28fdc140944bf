"""One line per unstable case: the kind of instability, and the remedy the numbers support.

Each rule reads only what the run measured (docs/design.md §16, "Diagnosis", lists them in this
order): the first that holds names the kind; completions cut at max_tokens, the best variant
measured beside the case (when one did better) and the token where the texts split (with
logprobs) are added to it. A case whose
samples all agree, or that has fewer than two, gets none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stabilitygate.conditions import Idempotency
from stabilitygate.judge.wording import p_phrase
from stabilitygate.measure.parsers import NOTHING_AT
from stabilitygate.remedies import ProbeResult, VariantResult
from stabilitygate.results import CaseMeasurement, VerdictName
from stabilitygate.suite.model import ParserKind

#: The conditions' sentence that names a change of concurrency starts so (stabilitygate/conditions.py).
CONCURRENCY_DIFFERS = "baseline drawn at concurrency"
RERUN_AT_ONE = "re-run at concurrency 1 to tell the server's batching from the model"


@dataclass(frozen=True)
class Evidence:
    """What the rules read about one case."""

    measurement: CaseMeasurement
    parser: ParserKind | None  # None without one
    idempotency: Idempotency = "per_sample"
    probe: ProbeResult | None = None
    variants: tuple[VariantResult, ...] = ()

    @property
    def samples(self) -> int:
        return self.measurement.samples_ok

    @property
    def unique(self) -> int:
        return self.measurement.metrics.unique_completions or 0


Rule = Callable[[Evidence], str | None]

#: The remedy each kind of answer allows (docs/design.md §16.2): an enum fits labels, a schema JSON,
#: neither a number or a text.
FORMAT_REMEDY: Mapping[ParserKind, str] = {
    "json": "ask for the format explicitly or use a strict schema",
    "choice": "ask for the bare label or use an enum of the labels",
    "number": "ask for the number alone",
    "regex": "ask for the form the regex reads",
    "text": "check the text parser's normalisation",
}
DECISION_REMEDY: Mapping[ParserKind, str] = {
    "json": "consider a strict schema or an enum",
    "choice": "consider an enum of the labels, or a less ambiguous prompt",
    "number": "make the prompt less ambiguous, or take a majority vote over samples",
    "regex": "make the prompt less ambiguous",
    "text": "make the prompt less ambiguous",
}


def diagnose(evidence: Evidence) -> str | None:
    """The case's diagnosis line, or None when it is stable (or has fewer than two samples)."""
    if evidence.samples < 2 or evidence.unique < 2:
        return None
    kind = next(found for rule in RULES if (found := rule(evidence)) is not None)
    extra = [clause for clause in (_cut(evidence), _best_variant(evidence), _split(evidence)) if clause]
    return "; ".join([kind, *extra])


def suggestion_from_remedies(evidence: Evidence) -> str | None:
    """A suggestion the probe or a variant supports better than the text's: None when they say nothing."""
    probe = evidence.probe
    if evidence.unique < 2:
        return None
    if probe is not None and probe.depends:
        return (
            "The answers depend on concurrency: run the case at concurrency 1, or serve it with batch-invariant "
            "kernels (they cost throughput)."
        )
    best = _best(evidence)
    if best is None or not best.significant or best.primary is None:
        return None
    overrides = f" ({', '.join(best.overrides)})" if best.overrides else ""
    return (
        f"Variant '{best.name}'{overrides} did significantly better: {best.primary.label} {best.primary.k}/"
        f"{best.primary.n}, {p_phrase(1.0 if best.p_holm is None else best.p_holm)} after Holm. Adopt it if "
        "what it costs fits the feature."
    )


def concurrency_advice(differ: Sequence[str], verdict: VerdictName, unique: int) -> str | None:
    """The suggestion when this run was drawn at another concurrency than the baseline and the case
    changed or varies; None otherwise."""
    change = next((s for s in differ if s.startswith(CONCURRENCY_DIFFERS)), None)
    if change is None or not (verdict in ("regressed", "warn") or unique > 1):
        return None
    return f"This run was drawn otherwise than the baseline ({change}): {RERUN_AT_ONE}."


# --- the rules, in order ----------------------------------------------------------------------------


def _backend_changed(e: Evidence) -> str | None:
    seen = [row.fingerprint for row in e.measurement.fingerprints if row.fingerprint]
    if len(seen) < 2:
        return None
    return (
        f"the provider changed backends mid-run ({len(seen)} system_fingerprints: {', '.join(seen[:3])}"
        f"{', ...' if len(seen) > 3 else ''}): compare samples of one backend, or re-run"
    )


def _concurrency(e: Evidence) -> str | None:
    probe = e.probe
    if probe is None or not probe.depends:
        return None
    what = "answer" if probe.compared == "answers" else "completion"
    p = p_phrase(1.0 if probe.p_holm is None else probe.p_holm)
    return (
        f"answers depend on concurrency (server-side batching): {probe.alone_distinct} distinct "
        f"{_plural(what, probe.alone_distinct)} alone, {probe.under_load_distinct} under load ({p} after Holm): "
        "run at concurrency 1 or serve with batch-invariant kernels"
    )


def _not_idempotent(e: Evidence) -> str | None:
    if e.idempotency != "shared":
        return None
    return (
        f"not idempotent: {e.unique} distinct completions for one key: the application's cache did not answer "
        "the repeated requests"
    )


def _formatting_only(e: Evidence) -> str | None:
    m = e.measurement
    if e.parser is None or len(m.answers) != 1 or m.metrics.parse_failures:
        return None
    return f"formatting only: {e.unique} distinct completions, one parsed answer; the parser already absorbs it"


def _wording_only(e: Evidence) -> str | None:
    if e.parser is not None or e.measurement.metrics.semantic_clusters != 1:
        return None
    return f"wording only: {e.unique} wordings of one meaning; judged by meaning"


def _format_varies(e: Evidence) -> str | None:
    m = e.measurement
    failures = m.metrics.parse_failures or 0
    if e.parser is None or not failures or len(m.answers) > 1:
        return None
    if any(f"(first: {NOTHING_AT}" in note for note in m.notes):  # JSON, read at the wrong place
        return (
            f"the pointer misses: {failures} of {e.samples} completions hold JSON with nothing there; check answer.json"
        )
    return f"the format varies: {failures} of {e.samples} completions do not parse; {FORMAT_REMEDY[e.parser]}"


def _decision_varies(e: Evidence) -> str | None:
    m = e.measurement
    if e.parser is None or len(m.answers) < 2:
        return None
    return (
        f"the decision itself varies: {len(m.answers)} answers, the most frequent in {m.answers[0].count} of "
        f"{e.samples}: {DECISION_REMEDY[e.parser]}"
    )


def _meaning_varies(e: Evidence) -> str | None:
    clusters = e.measurement.metrics.semantic_clusters
    if e.parser is not None or clusters is None or clusters < 2:
        return None
    share = e.measurement.metrics.semantic_agreement or 0.0
    return (  # free text: no parser, schema or enum to offer; the prompt and the decoding are what is left
        f"the meaning itself varies: {clusters} meanings, the largest holding {round(share * e.samples)} of "
        f"{e.samples}: say in the prompt what the answer must state, or lower the temperature"
    )


def _text_varies(e: Evidence) -> str:
    top = e.measurement.completions[0].count if e.measurement.completions else 0
    return (
        f"the text varies: {e.unique} distinct completions, the most frequent in {top} of {e.samples}: "
        "add a parser if only the answer matters"
    )


RULES: Sequence[Rule] = (
    _backend_changed,
    _concurrency,
    _not_idempotent,
    _formatting_only,
    _wording_only,
    _format_varies,
    _decision_varies,
    _meaning_varies,
    _text_varies,
)


# --- what is added to the kind ---------------------------------------------------------------------


def _cut(e: Evidence) -> str | None:
    cut = e.measurement.metrics.length_cut or 0
    if not cut:
        return None
    return f"{cut} of {e.samples} completions were cut at max_tokens: raise max_tokens"


def _best(e: Evidence) -> VariantResult | None:
    """The variant with the highest agreement above the case's own, in the case's own terms."""
    own_rate = _rate(e)
    better = [v for v in e.variants if v.error is None and v.primary is not None and v.primary.value > own_rate]
    return max(better, key=lambda v: (v.primary.value if v.primary else 0.0, -len(v.name)), default=None)


def _best_variant(e: Evidence) -> str | None:
    best = _best(e)
    if best is None or best.primary is None:
        return None
    if e.parser is not None and best.answers is not None:
        counted = f"{best.answers} {_plural('answer', best.answers)}"
    else:
        unique = best.unique_completions or 0
        counted = f"{unique} distinct {_plural('completion', unique)}"
    verdict = "significant" if best.significant else "not significant"
    p = p_phrase(1.0 if best.p_holm is None else best.p_holm)
    agreement = f"{best.primary.label} {best.primary.k}/{best.primary.n}"
    return (
        f"measured with variant '{best.name}': {counted} in {best.samples_ok}, {agreement} ({p} after Holm, {verdict})"
    )


def _rate(e: Evidence) -> float:
    """The case's own agreement on the metric its variants were compared on."""
    compared = next((v.primary for v in e.variants if v.primary is not None), None)
    if compared is None:
        return 1.0
    value = e.measurement.metrics.number(compared.metric)
    return 1.0 if value is None else value


def _split(e: Evidence) -> str | None:
    d = e.measurement.diagnostics
    where = e.measurement.metrics.divergence_token
    if d.split_token is None or where is None:
        return None
    margin = f", logprob margin {d.split_margin:g}" if d.split_margin is not None else ""
    return f"the texts split at token {where}: {d.split_token!r} over {d.split_runner_up!r}{margin}"


def _plural(word: str, count: int) -> str:
    return word if count == 1 else word + "s"
