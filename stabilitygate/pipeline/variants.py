"""`run --variants`: each variant of each case sampled and measured like the case as written.

Variants are drawn after the run's own samples, one sampler call per variant of each case, in the
order the file names them: so each has a request budget of its own (3 x its samples, as a run's), and
a variant whose provider fails stops and spends only itself, never another variant or the case. They
take the run's sampling settings but no early stop (a comparison needs every sample). Their samples go to
`RUN.variants.jsonl` beside the samples file, never into it: they are not the case's samples, and
`score` of the samples file judges the run exactly as before. Whatever goes wrong in a variant is
that variant's `error`; the case's own verdict never sees it (docs/design.md §16, "Variants").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from stabilitygate.cases import secret_env_names
from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.judge.variants import MeasuredVariant
from stabilitygate.pipeline.meanings import Meanings, meanings_of
from stabilitygate.pipeline.run import draw_samples
from stabilitygate.report.model import SamplingFacts
from stabilitygate.results import CaseMeasurement
from stabilitygate.samples import Sample
from stabilitygate.sampling.causes import most_common_cause
from stabilitygate.sampling.held_texts import HeldTexts
from stabilitygate.secrets import collect_secrets
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase, Sampling
from stabilitygate.suite.variants import ResolvedVariant

log = logging.getLogger("stabilitygate")
#: Measure these cases from these samples (with these entailment judgments) as the run measures its own.
Measure = Callable[[Sequence[ResolvedCase], Sequence[Sample], Meanings | None], list[CaseMeasurement]]


def variants_file(samples_out: Path | None) -> Path | None:
    """Where the variants' samples go: `run.jsonl` -> `run.variants.jsonl`."""
    if samples_out is None:
        return None
    return samples_out.with_name(samples_out.name.removesuffix(".jsonl") + ".variants.jsonl")


def variant_groups(loaded: LoadedSuite, cases: Sequence[ResolvedCase]) -> dict[str, list[ResolvedVariant]]:
    """The variants of these cases, grouped by name in the order the file first names them, each drawing
    as many samples as its case does in this run (`--samples`, a baseline's size)."""
    groups: dict[str, list[ResolvedVariant]] = {}
    for case in cases:
        for variant in loaded.variants.get(case.id, ()):
            sized = replace(variant, case=variant.case.model_copy(update={"samples": case.samples}))
            groups.setdefault(variant.name, []).append(sized)
    return groups


def draw_variants(
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    *,
    settings: Sampling,
    environ: Mapping[str, str],
    samples_out: Path | None,
    measure: Measure,
    cache_dir: str | None = None,
    secrets: Sequence[str] = (),
    held: HeldTexts | None = None,
) -> list[MeasuredVariant]:
    """Sample and measure every variant of `cases`; `measure(cases, samples, meanings)` measures them
    as the run measures its own cases. Every text is redacted with the run's `secrets` as well as the
    variant's own keys: a variant's program may echo the case's key (docs/design.md §12). `held`: the
    run's bound on the text its samples hold, which the variants' samples count against too."""
    groups = variant_groups(loaded, cases)
    if not groups:
        return []
    log.info("variants: %d variants of %d cases", sum(len(g) for g in groups.values()), len(cases))
    out = variants_file(samples_out)
    runs: list[MeasuredVariant] = []
    held = held or HeldTexts()
    each = [variant for group in groups.values() for variant in group]
    for i, variant in enumerate(each):  # one by one: a budget and a fate of its own (docs/design.md §16.1)
        runs.append(_draw_one(variant, settings, environ, secrets, held, out, i > 0, measure, cache_dir))
    return runs


def _draw_one(
    variant: ResolvedVariant,
    settings: Sampling,
    environ: Mapping[str, str],
    run_secrets: Sequence[str],
    held: HeldTexts,
    out: Path | None,
    append: bool,
    measure: Measure,
    cache_dir: str | None,
) -> MeasuredVariant:
    """One variant of one case, in a sampler call of its own."""
    cases = [variant.case]
    secrets = sorted({*collect_secrets(secret_env_names(cases), environ), *run_secrets})
    own = settings.model_copy(update={"early_stop": False, "max_requests": None})
    try:
        drawn = draw_samples(cases, own, environ, secrets=secrets, samples_out=out, append=append, held=held)
        meanings = meanings_of(
            cases, drawn.samples, settings=own, environ=environ, secrets=secrets, cache_dir=cache_dir
        )
        measured = measure(cases, drawn.samples, meanings)
    except (BadInput, CannotMeasure) as exc:  # e.g. the variant's key variable is not set
        return _measured(variant, None, str(exc))
    (m,) = measured
    return _measured(variant, m, _error(variant.case, m, drawn.facts))


def _measured(variant: ResolvedVariant, m: CaseMeasurement | None, error: str | None) -> MeasuredVariant:
    json_answer = variant.case.answer is not None and variant.case.answer.kind == "json"
    return MeasuredVariant(
        variant.case_id, variant.name, variant.overrides, variant.case.samples, m, error, json_answer
    )


def _error(case: ResolvedCase, m: CaseMeasurement, facts: SamplingFacts) -> str | None:
    """Why a variant's figures cannot stand beside the case's (the case's own `error` rule): what the
    requests failed with first, then what stopped the variant's sampling."""
    limit = case.thresholds.max_sample_errors
    limit = case.samples // 2 if limit is None else limit
    if m.samples_ok >= 2 and m.sample_errors <= limit:
        return None
    cause = most_common_cause(m.errors)
    stopped = facts.fatal_error or ("interrupted" if facts.interrupted else None)
    stopped = stopped or (
        "the request budget ran out before every sample was drawn" if facts.budget_exhausted else None
    )
    said = f"{m.sample_errors} of {m.samples_requested} samples failed"
    said += f", {cause.sentence()}" if cause is not None else ": fewer than 2 samples"
    return said + (f"; {stopped}" if stopped is not None and (cause is None or stopped not in cause.error) else "")
