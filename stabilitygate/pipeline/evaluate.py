"""The pipeline's tail, shared by run, score and merge: measure -> judge -> (baseline) -> Report.

Each step is its own function; `evaluate` only strings them together. Nothing here prints or
writes a report file: the library returns the `Report`, and the CLI or the Action decides what to
write (docs/design.md, "Library API"). The one file written here is the baseline, and only when
the caller asked for it with `update_baseline`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from stabilitygate.conditions import Conditions
from stabilitygate.errors import EXIT_CANNOT_MEASURE, EXIT_FAIL, EXIT_PASS, BadInput
from stabilitygate.judge.baseline import (
    Baseline,
    BaselineCase,
    baseline_from_run,
    check_suite_name,
    merge_baselines,
    orphaned_entries,
    read_baseline,
    refused_cases,
    write_baseline,
)
from stabilitygate.judge.checks import draws_more
from stabilitygate.judge.compare import Similarity
from stabilitygate.judge.fail_on import FailOn
from stabilitygate.judge.gate import exit_code, run_verdict, verdict_counts
from stabilitygate.judge.stages import StageDesign
from stabilitygate.judge.threshold_noise import noisy_thresholds_of
from stabilitygate.judge.variants import MeasuredVariant
from stabilitygate.judge.verdicts import judge_cases
from stabilitygate.judge.wording import update_hint
from stabilitygate.measure.case import measure_case
from stabilitygate.measure.embedder import Embedder, embedding_info, similarity
from stabilitygate.measure.meaning import JudgmentLookup
from stabilitygate.measure.summary import suite_summary
from stabilitygate.pipeline.changed import baseline_measurement, unchanged_result
from stabilitygate.pipeline.cut_short import cut_short_reasons, with_cut_short
from stabilitygate.pipeline.entailment_results import entailment_facts, with_entailment_cost, with_entailment_errors
from stabilitygate.pipeline.meanings import JudgingSteps, Meanings
from stabilitygate.pipeline.options import default_baseline_path
from stabilitygate.pipeline.remedies import RemedyInputs, with_remedies
from stabilitygate.pipeline.stages import GoesOn, designs_of, held_so_far, read_stages
from stabilitygate.providers import fingerprint_note
from stabilitygate.report.json_report import build_report
from stabilitygate.report.model import BaselineFacts, EmbeddingFacts, Report, RunFacts, SamplingFacts, SuiteRef
from stabilitygate.report.run_facts import BaselineStatus
from stabilitygate.results import CaseMeasurement, CaseVerdict
from stabilitygate.samples import Sample
from stabilitygate.suite.load import LoadedSuite
from stabilitygate.suite.model import ResolvedCase


@dataclass(frozen=True)
class Judging:
    """How a measured run is judged and whether it becomes the new baseline."""

    baseline_path: Path | None = None  # None: the suite's path with .baseline.json
    update_baseline: bool = False
    fail_on: FailOn = "regression"
    accept_suite: str | None = None  # a baseline recorded under this suite name is compared too


@dataclass(frozen=True)
class BaselineFile:
    """The baseline as read before anything was spent: its path and contents (None: there is none yet)."""

    path: Path
    contents: Baseline | None
    problem: str | None = None  # why an unreadable baseline was set aside (changed-only runs only)


def read_baseline_file(loaded: LoadedSuite, judging: Judging, *, tolerate_bad: bool = False) -> BaselineFile:
    """Read the baseline before sampling: an unreadable one is exit 2 with nothing spent or touched.

    `tolerate_bad` (changed-only): a baseline whose hashes cannot be read is set aside instead, with
    its reason, so that the run samples every case and says why.
    """
    path = judging.baseline_path or default_baseline_path(Path(loaded.path))
    try:
        contents = read_baseline(path)
    except BadInput as exc:
        if not tolerate_bad:
            raise
        return BaselineFile(path, None, f"the baseline cannot be read ({exc})")
    if contents is not None:  # another suite's baseline is a mistake even where a damaged one is tolerated
        check_suite_name(contents, loaded.suite.name, path, judging.accept_suite)
    return BaselineFile(path, contents)


def evaluate(
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    samples: Iterable[Sample],
    *,
    judging: Judging,
    requested: Mapping[str, int],
    baseline: BaselineFile,
    embedder: Embedder | None,
    sampling: SamplingFacts | None = None,
    unchanged: Sequence[tuple[ResolvedCase, BaselineCase]] = (),
    changed_only: bool = False,
    meanings: Meanings | None = None,
    variants: Sequence[MeasuredVariant] = (),
    conditions: Mapping[str, Conditions] | None = None,
) -> Report:
    """Measure every case, judge it against the baseline, record the baseline when asked; the Report.

    `unchanged` (changed-only runs): cases not sampled, which keep their baseline figures.
    `meanings`: the entailment judgments of the cases with `equivalence:` (`pipeline/meanings.py`).
    `variants`: the cases' variants as measured by `run --variants` (`pipeline/variants.py`).
    `conditions`: how live sampling drew each case (`pipeline/conditions.py`); None for score and merge.
    """
    samples = list(samples)
    planned, paths = read_stages(cases, samples, baseline.contents, adaptive=not judging.update_baseline)
    requested = {**requested, **planned}  # an adaptive case planned the samples of the stage it reached
    measurements = measure_cases(
        cases, samples, requested=requested, embedder=embedder, sampling=sampling, meanings=meanings
    )
    verdicts = judge_cases(
        cases,
        measurements,
        baseline.contents,
        loaded.suite.regression,
        similarity=_similarity(embedder),
        same_meaning_by_case=meanings.same_meaning_by_case() if meanings is not None else None,
        paths=paths,
    )
    verdicts = with_entailment_errors(verdicts, meanings.failed if meanings is not None else {})
    if sampling is not None and sampling.fatal_error is not None:
        stops = cut_short_reasons(requested, samples, sampling.fatal_error, sampling.early_stopped)
        verdicts = with_cut_short(verdicts, stops)
    could_not_measure = sampling is not None and sampling.could_not_measure
    code = exit_code(verdicts, judging.fail_on, could_not_measure=could_not_measure)
    recorded = Recorded("compared" if baseline.contents is not None else "missing")
    if judging.update_baseline:
        recorded = record_baseline(
            loaded,
            cases,
            measurements,
            verdicts,
            baseline,
            could_not_measure=code == EXIT_CANNOT_MEASURE,
            conditions=conditions or {},
        )
        verdicts = recorded_wording(verdicts) if recorded.status == "updated" else verdicts
    run = RunFacts(
        baseline=baseline_facts(loaded, baseline, recorded),
        embedding=embedding_facts(embedder),
        fail_on=judging.fail_on,
        sampling=sampling,
        changed_only=changed_only,
        entailment=entailment_facts(meanings, measurements),
    )
    report = build_report(
        SuiteRef(loaded.path, loaded.suite.name),
        cases,
        measurements,
        verdicts,
        summary=suite_summary(measurements, cases),
        counts=verdict_counts(verdicts),
        run=run,
        # Recording is what was asked: the verdicts are shown, not gated; a case it refused fails.
        exit_code=(EXIT_FAIL if recorded.refused else EXIT_PASS) if recorded.status == "updated" else code,
        # A case the recording refused fails the run, whatever its own verdict (`min_parsed: 0`).
        verdict="fail"
        if recorded.refused and not could_not_measure
        else run_verdict(verdicts, fatal=could_not_measure),
    )
    remedies = RemedyInputs(
        cases,
        samples,
        baseline.contents,
        loaded.suite.regression.alpha,
        loaded.suite.sampling.probe,
        variants,
        conditions,
    )
    report = with_remedies(report, remedies)
    return with_unchanged(report, loaded, cases, measurements, unchanged) if changed_only else report


def with_unchanged(
    report: Report,
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    unchanged: Sequence[tuple[ResolvedCase, BaselineCase]],
) -> Report:
    """The report of a changed-only run: the unchanged cases' rows in suite order, and the summary over all."""
    rows = {c.id: c for c in report.cases} | {case.id: unchanged_result(case, entry) for case, entry in unchanged}
    order = [c.id for c in loaded.suite.cases if c.id in rows]
    everything = [*cases, *(case for case, _ in unchanged)]
    figures = [*measurements, *(baseline_measurement(case, entry) for case, entry in unchanged)]
    summary = replace(
        report.summary.with_numbers(suite_summary(figures, everything)),
        cases=report.summary.cases + len(unchanged),
        unchanged=len(unchanged),
        requests_saved=sum(case.samples for case, _ in unchanged),
    )
    return replace(report, cases=tuple(rows[cid] for cid in order), summary=summary)


def measure_cases(
    cases: Sequence[ResolvedCase],
    samples: Iterable[Sample],
    *,
    requested: Mapping[str, int],
    embedder: Embedder | None,
    sampling: SamplingFacts | None,
    meanings: Meanings | None = None,
) -> list[CaseMeasurement]:
    """Every case's numbers, with the notes only the pipeline knows."""
    by_case: dict[str, list[Sample]] = defaultdict(list)
    for sample in samples:
        by_case[sample.case].append(sample)
    measured = []
    for case in cases:
        lookup = meanings.lookup(case.id) if meanings is not None else None
        if case.entailment_judge is not None and lookup is None:
            lookup = JudgmentLookup("", {})  # never judged: the case cannot be measured, never by cosine
        m = measure_case(
            case, by_case.get(case.id, []), embedder=embedder, samples_requested=requested[case.id], meaning=lookup
        )
        if case.entailment_judge is not None:
            m = with_entailment_cost(m, meanings.costs.get(case.id) if meanings is not None else None)
        measured.append(with_pipeline_notes(m, case, sampling))
    return measured


def with_pipeline_notes(
    measurement: CaseMeasurement, case: ResolvedCase, sampling: SamplingFacts | None
) -> CaseMeasurement:
    """Notes from outside the samples: an early stop, a provider that cannot show its backend."""
    notes = list(measurement.notes)
    if sampling is not None and measurement.id in sampling.early_stopped:
        notes.append(f"sampling stopped early: {sampling.early_stopped[measurement.id]}")
    fingerprint = fingerprint_note(case.provider.type)
    if fingerprint:
        notes.append(fingerprint)
    return measurement if tuple(notes) == measurement.notes else replace(measurement, notes=tuple(notes))


@dataclass(frozen=True)
class Recorded:
    """What became of the baseline: its status, the cases it refused, the file as written."""

    status: BaselineStatus
    refused: tuple[str, ...] = ()  # measured cases none of whose answers parsed: never recorded
    written: Baseline | None = None
    kept: int = 0  # a partial update: entries of other cases kept as they were
    fresh: int = 0  # the entries this run wrote


def record_baseline(
    loaded: LoadedSuite,
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    verdicts: Sequence[CaseVerdict],
    baseline: BaselineFile,
    *,
    could_not_measure: bool,
    conditions: Mapping[str, Conditions] | None = None,
) -> Recorded:
    """Write the baseline from this run (a partial run keeps the other cases' entries).

    `conditions`: how live sampling drew each case, kept beside its figures (none for score and merge)."""
    if could_not_measure:
        return Recorded("not written: the run could not measure")
    fresh = baseline_from_run(cases, measurements, loaded.suite.name, verdicts=verdicts, conditions=conditions)
    suite_ids = {c.id for c in loaded.suite.cases}
    written = merge_baselines(baseline.contents, fresh, suite_ids)
    write_baseline(baseline.path, written)
    kept = len(written.cases) - len(fresh.cases)
    return Recorded("updated", refused_cases(cases, measurements), written, kept, len(fresh.cases))


def baseline_facts(loaded: LoadedSuite, baseline: BaselineFile, recorded: Recorded) -> BaselineFacts:
    """The report's word on the baseline: the path read, entries that fit no case, what a recording
    refused, and the thresholds the recorded counts put inside the noise (docs/design.md §8)."""
    contents = baseline.contents
    foreign = contents.suite if contents is not None and contents.suite != loaded.suite.name else None
    # Judged against the pull requests' size (`samples`), not the size a baseline is recorded at.
    noisy = noisy_thresholds_of(loaded.resolved_cases(), recorded.written, loaded.suite.regression.alpha)
    return BaselineFacts(
        str(baseline.path),
        recorded.status,
        recorded_suite=foreign,
        orphans=orphaned_entries(contents, {c.id for c in loaded.suite.cases}),
        not_recorded=recorded.refused,
        noisy_thresholds=noisy,
        kept=recorded.kept,
        recorded=recorded.fresh,
    )


def recorded_wording(verdicts: Sequence[CaseVerdict]) -> list[CaseVerdict]:
    """A recorded run's new cases say that this run recorded them, not that a run should."""
    hint = update_hint()
    return [
        replace(v, reasons=(v.reasons[0].replace(hint, "recorded by this run"), *v.reasons[1:]))
        if v.verdict == "new" and v.reasons and v.reasons[0].endswith(hint)
        else v
        for v in verdicts
    ]


def make_embedder(loaded: LoadedSuite, cache_dir: str | None = None) -> Embedder | None:
    """The suite's embedder (None with the semantic layer off); cheap: nothing is loaded yet."""
    settings = loaded.suite.embedding
    if not settings.enabled:
        return None
    try:
        return Embedder(settings.model, batch_size=settings.batch_size, cache_dir=cache_dir)
    except BadInput as exc:
        if exc.path is not None:
            raise
        line = loaded.line_of(("embedding", "model")) or loaded.line_of(("embedding",))
        raise BadInput(str(exc), path=loaded.path, line=line) from exc


def embedding_facts(embedder: Embedder | None) -> EmbeddingFacts | None:
    if embedder is None:
        return None
    return embedding_info(embedder)


def stage_checks(baseline: Baseline | None, embedder: Embedder | None, judging: JudgingSteps | None) -> GoesOn:
    """How a live run checks its cases, to choose the ones that draw more (pipeline/stages.py): each
    measured on its samples so far, its meanings judged first (docs/design.md §6, "Stages")."""
    designs: dict[str, StageDesign] = {}

    def goes_on(cases: Sequence[ResolvedCase], samples: Sequence[Sample]) -> set[str]:
        designs.update(designs_of([c for c in cases if c.id not in designs], baseline))
        held = {c.id: held_so_far(samples, c.id) for c in cases}
        mine = [s for s in samples if s.case in held]
        meanings = judging.step(cases, mine, baseline) if judging is not None else None
        if judging is not None and judging.session.interrupted:
            return set()  # interrupted while the judge was asked: the run ends here, as at Ctrl-C
        measured = measure_cases(cases, mine, requested=held, embedder=embedder, sampling=None, meanings=meanings)
        same = meanings.same_meaning_by_case() if meanings is not None else {}
        similarity = _similarity(embedder)
        chosen = set()
        for case, m in zip(cases, measured, strict=True):
            entry = baseline.entry_for(case) if baseline is not None else None
            if entry is None or (meanings is not None and case.id in meanings.failed) or m.diagnostics.entailment_error:
                continue  # nothing to compare, or its meanings cannot be measured: it draws no more
            design, check = designs[case.id], held[case.id]
            if draws_more(case, m, entry, design, check, similarity=similarity, same_meaning=same.get(case.id)):
                chosen.add(case.id)
        return chosen

    return goes_on


def _similarity(embedder: Embedder | None) -> Similarity | None:
    if embedder is None:
        return None

    def cosine(a: str, b: str) -> float:
        return similarity(embedder, a, b)

    return cosine


__all__ = [
    "BaselineFile",
    "Judging",
    "Recorded",
    "baseline_facts",
    "embedding_facts",
    "evaluate",
    "make_embedder",
    "measure_cases",
    "read_baseline_file",
    "record_baseline",
    "with_pipeline_notes",
]
