"""The library API: `run`, `score` and `merge` return a `Report` and write nothing unless asked.

The CLI (`stabilitygate.cli`) and the Action (`stabilitygate.github.action`) are thin layers over
these three functions (docs/design.md, "Library API"). "Asked" means: `update_baseline=True`
writes the baseline, `samples_out=PATH` appends the samples as they arrive; report files are the
caller's (`stabilitygate.report.files.write_report_files`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from stabilitygate.cases import check_environment, load_suite, secret_env_names
from stabilitygate.errors import BadInput
from stabilitygate.judge.fail_on import FailOn
from stabilitygate.judge.variants import MeasuredVariant
from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.pipeline.changed import ChangedSelection, current_commit, select_changed, unsampled_unchanged
from stabilitygate.pipeline.conditions import run_conditions
from stabilitygate.pipeline.evaluate import (
    BaselineFile,
    Judging,
    evaluate,
    make_embedder,
    measure_cases,
    read_baseline_file,
    stage_checks,
)
from stabilitygate.pipeline.key_routes import say_key_routes
from stabilitygate.pipeline.meanings import Meanings, judging_steps, meanings_of, recorded_judgments
from stabilitygate.pipeline.options import Shard
from stabilitygate.pipeline.plan import Plan, plan_suite
from stabilitygate.pipeline.probe import draw_with_probe
from stabilitygate.pipeline.run import draw_samples, sampling_settings
from stabilitygate.pipeline.score import (
    ScoredSamples,
    cases_of_samples,
    check_shards,
    merged_sampling,
    read_sample_files,
    samples_file_of,
    shard_sample_counts,
)
from stabilitygate.pipeline.select import select_cases
from stabilitygate.pipeline.stages import Draw, Staged, draw_in_stages
from stabilitygate.pipeline.variants import draw_variants
from stabilitygate.report.model import Report, SamplingFacts
from stabilitygate.report.read import read_report
from stabilitygate.results import CaseMeasurement
from stabilitygate.samples import Sample
from stabilitygate.sampling.held_texts import HeldTexts
from stabilitygate.secrets import MIN_SECRET_CHARS, collect_secrets
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase, Sampling
from stabilitygate.suite.sizes import baseline_size, checked_samples

if TYPE_CHECKING:
    from stabilitygate.measure.embedder import Embedder

log = logging.getLogger("stabilitygate")
SuiteLike = LoadedSuite | str | os.PathLike[str]
PathLike = str | os.PathLike[str]


def run(
    suite: SuiteLike,
    *,
    baseline: PathLike | None = None,
    update_baseline: bool = False,
    fail_on: FailOn = "regression",
    samples: int | None = None,
    concurrency: int | None = None,
    cases: Sequence[str] = (),
    shard: Shard | None = None,
    early_stop: bool | None = None,
    samples_out: PathLike | None = None,
    progress: bool | None = False,
    changed_only: bool = False,
    commit: str | None = None,
    environ: Mapping[str, str] | None = None,
    embedding_cache: PathLike | None = None,
    accept_baseline_suite: str | None = None,
    variants: bool = False,
) -> Report:
    """Sample every case of `suite` N times, measure, judge against the baseline; the Report.

    `changed_only` samples only the cases whose definition changed since the baseline (and
    `sampling.canaries` unchanged ones, picked from `commit`: default $GITHUB_SHA or git's HEAD).
    `variants` also measures each sampled case's `variants:` beside it (reported, never judged).
    `environ` holds the providers' keys (default: the process environment); `embedding_cache` is
    the embedding cache's directory ("off" for none; default: the user's cache directory).
    `accept_baseline_suite`: a baseline recorded under this suite name is compared too (else exit 2).
    """
    checked_samples(samples, named="--samples")  # before anything is loaded, drawn or allocated
    loaded = _loaded(suite)
    env = os.environ if environ is None else environ
    check_environment(loaded, env)
    judging = Judging(_path(baseline), update_baseline, fail_on, accept_baseline_suite)
    baseline_file = read_baseline_file(loaded, judging, tolerate_bad=changed_only)  # before any token is spent
    chosen = _chosen_cases(loaded, cases, samples, update_baseline)
    selection = _changed_cases(loaded, chosen, baseline_file, env, commit) if changed_only else None
    to_sample = select_cases(selection.sampled if selection is not None else chosen, shard=shard)
    embedder = make_embedder(loaded, _cache(embedding_cache))
    if embedder is not None and to_sample:
        embedder.start_loading()  # the model loads while the first requests are in flight
    settings = sampling_settings(loaded, concurrency, early_stop)
    secrets = _run_secrets(loaded, to_sample, env)
    say_key_routes([*to_sample, *(_variant_cases(loaded, to_sample) if variants else ())], env)  # before any request

    spent: list[int] = []  # requests of the stages so far: `max_requests` caps the whole run
    held = HeldTexts.of(to_sample)  # one bound on the text held, over every stage and the variants

    def draw(
        some: Sequence[ResolvedCase], start: Mapping[str, int], append: bool, concurrency: int | None = None
    ) -> tuple[list[Sample], SamplingFacts]:
        drawn = draw_samples(
            some,
            _left_of(settings, spent, concurrency),
            env,
            secrets=secrets,
            samples_out=_path(samples_out),
            progress=progress,
            shard=shard,
            # Completions are embedded while the rest are still being sampled.
            on_completion=(lambda text: embedder.prefetch((text,))) if embedder is not None else None,
            start=start,
            append=append,
            held=held,
        )
        spent.append(drawn.facts.requests)
        return drawn.samples, drawn.facts

    # The entailment judges (cases with `equivalence:`) are asked before each stage is measured.
    judges = judging_steps(
        to_sample,
        settings=settings,
        environ=env,
        secrets=secrets,
        cache_dir=_cache(embedding_cache),
        samples_out=_path(samples_out),
    )

    def sampling(draw_at: Draw) -> Staged:
        if update_baseline:  # a baseline is one fixed stage
            return Staged(*draw_at(to_sample, {}, False))
        # Checks every half of `samples` up to `max_samples` (docs/design.md §6, "Stages").
        checks = stage_checks(baseline_file.contents, embedder, judges)
        return draw_in_stages(to_sample, baseline_file.contents, draw_at, checks)

    # With `sampling.probe`, each case's first half is drawn alone first (docs/design.md §16).
    sampled = draw_with_probe(to_sample, loaded.suite.sampling.probe, draw, sampling)
    meanings = None
    if judges is not None and judges.session.interrupted:  # at a check: an interrupted run, as at Ctrl-C
        sampled = replace(sampled, facts=replace(sampled.facts, interrupted=True))
    if judges is not None and (judges.session.interrupted or not sampled.facts.interrupted):
        meanings = judges.step(to_sample, sampled.samples, baseline_file.contents)
    measured_variants = (
        _variants_of(
            loaded, to_sample, settings, env, secrets, held, _path(samples_out), embedder, _cache(embedding_cache)
        )
        if variants and not sampled.facts.interrupted
        else []
    )
    return evaluate(
        loaded,
        to_sample,
        sampled.samples,
        judging=judging,
        requested={c.id: c.samples for c in to_sample},
        baseline=baseline_file,
        embedder=embedder,
        sampling=sampled.facts,
        # A shard reports only what it sampled; the merge job adds the unchanged cases once.
        unchanged=selection.unchanged if selection is not None and shard is None else (),
        changed_only=changed_only,
        meanings=meanings,
        variants=measured_variants,
        conditions=run_conditions(to_sample, sampled.samples, settings.concurrency, loaded.suite.sampling.probe),
    )


def _run_secrets(loaded: LoadedSuite, cases: Sequence[ResolvedCase], environ: Mapping[str, str]) -> list[str]:
    """The values a run redacts, everywhere: the keys of the cases' providers, of their variants and of
    their entailment judges, whichever of them a text comes from; a variable the suite names whose
    value is too short to redact without altering completions is left unredacted, and said so
    (docs/design.md §12)."""
    found = collect_secrets(secret_env_names([*cases, *_variant_cases(loaded, cases)]), environ)
    for name in sorted(found.too_short):
        log.warning(
            "the value of %s is shorter than %d characters, too short to redact without altering the "
            "completions: it is not redacted (a real key is longer)",
            name,
            MIN_SECRET_CHARS,
        )
    return sorted(found)


def _variant_cases(loaded: LoadedSuite, cases: Sequence[ResolvedCase]) -> list[ResolvedCase]:
    """The variants of these cases, as the cases they sample (`CASE@NAME`)."""
    return [variant.case for case in cases for variant in loaded.variants.get(case.id, ())]


def _variants_of(
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    settings: Sampling,
    environ: Mapping[str, str],
    secrets: Sequence[str],
    held: HeldTexts,
    samples_out: Path | None,
    embedder: Embedder | None,
    cache_dir: str | None,
) -> list[MeasuredVariant]:
    """`run --variants`: the cases' variants, sampled after the run and measured like its cases."""

    def measure(
        some: Sequence[ResolvedCase], drawn: Sequence[Sample], judged: Meanings | None
    ) -> list[CaseMeasurement]:
        sizes = {c.id: c.samples for c in some}
        return measure_cases(some, drawn, requested=sizes, embedder=embedder, sampling=None, meanings=judged)

    return draw_variants(
        loaded,
        cases,
        settings=settings,
        environ=environ,
        secrets=secrets,
        held=held,
        samples_out=samples_out,
        measure=measure,
        cache_dir=cache_dir,
    )


def _left_of(settings: Sampling, spent: Sequence[int], concurrency: int | None = None) -> Sampling:
    """The settings of a later stage: what is left of the run's `max_requests` (at least one), and
    the concurrency of a draw that needs its own (the probe's requests alone)."""
    if concurrency is not None:
        settings = settings.model_copy(update={"concurrency": concurrency})
    if settings.max_requests is None or not spent:
        return settings
    return settings.model_copy(update={"max_requests": max(settings.max_requests - sum(spent), 1)})


def _chosen_cases(
    loaded: LoadedSuite, case_ids: Sequence[str], samples: int | None, update_baseline: bool = False
) -> list[ResolvedCase]:
    """The cases `--case` names (all by default), with `--samples` applied; recording a baseline
    without `--samples` draws each case's `baseline_samples` (docs/design.md §6, "Power")."""
    chosen = select_cases(loaded.resolved_cases(), case_ids)
    if samples is None and update_baseline:
        return [c.model_copy(update={"samples": baseline_size(c)}) for c in chosen]
    if samples is None:
        return chosen
    return [c.model_copy(update={"samples": samples}) for c in chosen]


def _changed_cases(
    loaded: LoadedSuite,
    chosen: Sequence[ResolvedCase],
    baseline: BaselineFile,
    environ: Mapping[str, str],
    commit: str | None,
) -> ChangedSelection:
    """What a changed-only run samples, said in one log line."""
    selection = select_changed(
        chosen,
        baseline.contents,
        canaries=loaded.suite.sampling.canaries,
        commit=commit if commit is not None else current_commit(environ, Path(loaded.path).parent),
    )
    _say_what_changed_only_does(selection, baseline)
    return selection


def _say_what_changed_only_does(selection: ChangedSelection, baseline: BaselineFile) -> None:
    if selection.everything_because is not None or baseline.problem is not None:
        why = baseline.problem or selection.everything_because
        log.warning("changed-only: %s: sampling every case", why)
        return
    canaries = f" (+ {len(selection.canaries)} canaries: {', '.join(selection.canaries)})" if selection.canaries else ""
    log.info(
        "changed-only: sampling %d changed or new cases%s; %d unchanged cases keep their baseline figures",
        len(selection.sampled) - len(selection.canaries),
        canaries,
        len(selection.unchanged),
    )


def score(
    samples: Iterable[Sample] | Sequence[PathLike],
    *,
    suite: SuiteLike,
    baseline: PathLike | None = None,
    update_baseline: bool = False,
    fail_on: FailOn = "regression",
    embedding_cache: PathLike | None = None,
    accept_baseline_suite: str | None = None,
) -> Report:
    """The Report of samples drawn earlier (`Sample` objects or samples JSONL files), calling no model.

    An entailment judge (`equivalence:`) is asked only what the judgments recorded beside the
    samples files (and the cache) do not answer.

    `samples` is either all `Sample` objects or all paths: a mix is a TypeError.
    """
    items = list(samples)
    paths = [Path(p) for p in items if isinstance(p, str | os.PathLike)]
    objects = [s for s in items if isinstance(s, Sample)]
    if len(paths) + len(objects) != len(items) or (paths and objects):
        raise TypeError("score() takes either Sample objects or paths of samples files, not a mix of them or others")
    loaded = _loaded(suite)
    drawn = read_sample_files(paths) if paths else objects
    scored = cases_of_samples(loaded, drawn, source=str(paths[0]) if paths else None)
    judging = Judging(_path(baseline), update_baseline, fail_on, accept_baseline_suite)
    return _judge_scored(loaded, scored, judging, embedding_cache, recorded=recorded_judgments(paths))


def merge(
    reports: Sequence[PathLike],
    *,
    suite: SuiteLike | None = None,
    baseline: PathLike | None = None,
    update_baseline: bool = False,
    fail_on: FailOn = "regression",
    embedding_cache: PathLike | None = None,
    accept_baseline_suite: str | None = None,
) -> Report:
    """Join the reports of `run --shard K/N` jobs: their samples judged together, so the run's correction
    sees every case."""
    paths = [Path(p) for p in reports]
    shards = [read_report(p) for p in paths]
    check_shards([(str(p), r) for p, r in zip(paths, shards, strict=True)])
    loaded = _loaded(suite if suite is not None else _suite_of(shards))
    files = [samples_file_of(r, p) for r, p in zip(shards, paths, strict=True)]
    drawn = read_sample_files(files)
    scored = cases_of_samples(loaded, drawn, shard_sample_counts(shards), source=str(paths[0]))
    changed_only = any(r.run.changed_only for r in shards)
    return _judge_scored(
        loaded,
        scored,
        Judging(_path(baseline), update_baseline, fail_on, accept_baseline_suite),
        embedding_cache,
        sampling=merged_sampling(shards),
        changed_only=changed_only,
        recorded=recorded_judgments(files),
    )


def _judge_scored(
    loaded: LoadedSuite,
    scored: ScoredSamples,
    judging: Judging,
    embedding_cache: PathLike | None,
    sampling: SamplingFacts | None = None,
    changed_only: bool = False,
    recorded: Mapping[PairKey, Judgment] | None = None,
) -> Report:
    baseline_file = read_baseline_file(loaded, judging)
    # The cases a changed-only matrix did not sample keep their baseline figures, as in one job.
    unchanged = unsampled_unchanged(loaded, scored, baseline_file.contents) if changed_only else []
    quiet = {c.id for c, _ in unchanged}
    for note in scored.notes:
        if not (quiet and note.startswith("note: no samples")):
            log.warning(note)
    # Judgments recorded with the samples answer the judge's questions; only missing ones are asked.
    meanings = meanings_of(
        scored.cases,
        scored.samples,
        settings=loaded.suite.sampling,
        environ=os.environ,
        secrets=_run_secrets(loaded, scored.cases, os.environ),
        baseline=baseline_file.contents,
        cache_dir=_cache(embedding_cache),
        recorded=recorded,
    )
    return evaluate(
        loaded,
        scored.cases,
        scored.samples,
        judging=judging,
        requested=scored.requested,
        baseline=baseline_file,
        embedder=make_embedder(loaded, _cache(embedding_cache)),
        sampling=sampling,
        unchanged=unchanged,
        changed_only=changed_only,
        meanings=meanings,
    )


def _suite_of(reports: Sequence[Report]) -> str:
    paths = {r.suite.path for r in reports}
    if len(paths) != 1:
        raise BadInput(f"the reports come from different suites: {', '.join(sorted(paths))}")
    return paths.pop()


def _loaded(suite: SuiteLike) -> LoadedSuite:
    return suite if isinstance(suite, LoadedSuite) else load_suite(suite)


def _path(value: PathLike | None) -> Path | None:
    return None if value is None else Path(value)


def _cache(value: PathLike | None) -> str | None:
    return None if value is None else os.fspath(value)


def plan(
    suite: PathLike,
    *,
    baseline: PathLike | None = None,
    update_baseline: bool = False,
    samples: int | None = None,
    accept_baseline_suite: str | None = None,
) -> Plan:
    """What `run` would request and spend, and the smallest drop each case can detect; calls nothing."""
    return plan_suite(
        suite,
        baseline=baseline,
        update_baseline=update_baseline,
        samples=samples,
        accept_baseline_suite=accept_baseline_suite,
    )


__all__ = ["merge", "plan", "run", "score"]
