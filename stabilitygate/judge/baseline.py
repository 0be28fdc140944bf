"""The baseline file: what a recorded run looked like, per case, committed next to the suite.

Written with sorted keys, stable formatting and no timestamps, so that re-recording an unchanged
run gives the same bytes and an intended change reads well in the pull request's diff. Written
atomically: a crash mid-write leaves the previous file whole. Read strictly: a damaged file is an
error (exit 2) and is never rewritten behind the user's back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from stabilitygate.atomic import write_atomic
from stabilitygate.bounded import MAX_BASELINE_BYTES
from stabilitygate.conditions import Conditions
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import read_json_file
from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.metrics import Agreement, Metrics, SampleCount
from stabilitygate.names import SuiteName
from stabilitygate.older_versions import baseline_as_current
from stabilitygate.results import AnswerCount, CaseMeasurement, CaseVerdict, CompletionCount, FingerprintCount
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.typed_json import (
    JSON,
    SCHEMA_VERSION,
    SchemaVersion,
    from_json,
    json_schema,
    omitted_when_default,
    to_json,
)

TOP = 5  # completions and answers kept per case: enough to show what changed, small in a diff


@dataclass(frozen=True)
class BaselineCase:
    """What the baseline keeps of one recorded case."""

    hash: str
    samples: SampleCount  # successful samples of the recorded run (n)
    metrics: Metrics
    primary: Agreement | None
    modal_completion: str | None = None
    modal_answer: JSON = None
    completions: tuple[CompletionCount, ...] = ()  # the top TOP
    answers: tuple[AnswerCount, ...] = ()  # the top TOP
    fingerprints: tuple[FingerprintCount, ...] = ()
    # Failed samples of the recorded run (the rate `max_sample_errors` is checked against); 0 is left out.
    sample_errors: SampleCount = omitted_when_default(0)
    # How the recorded samples were drawn (a live run; older baselines have none).
    conditions: Conditions | None = omitted_when_default()


@dataclass(frozen=True)
class Baseline:
    """The baseline file: its fields are the file's keys (docs/design.md §8, "Files")."""

    suite: SuiteName  # bounded as the suite's own name is: a 4 MB one came back as an 8 MB annotation
    cases: Mapping[str, BaselineCase]
    schema_version: SchemaVersion = SCHEMA_VERSION

    def entry_for(self, case: ResolvedCase) -> BaselineCase | None:
        """The case's entry while its definition hash still matches; None when there is none, or the
        case changed since it was recorded (its prompt, provider or parser: docs/design.md §4)."""
        entry = self.cases.get(case.id)
        return entry if entry is not None and entry.hash == case.definition_hash else None


# --- building -----------------------------------------------------------------------------------


def baseline_from_run(
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    suite_name: str,
    *,
    verdicts: Sequence[CaseVerdict] = (),
    conditions: Mapping[str, Conditions] | None = None,
) -> Baseline:
    """The baseline this run would record. Cases measured on fewer than 2 samples are left out.

    A case's primary agreement comes from its verdict when one is given (the judge computes it once
    per case), else it is computed here. `conditions` (a live run): how each case's samples were drawn.
    """
    by_id = {m.id: m for m in measurements}
    judged = {v.id: v.primary for v in verdicts}
    entries: dict[str, BaselineCase] = {}
    for case in cases:
        m = by_id.get(case.id)
        if m is None or m.samples_ok < 2 or nothing_parsed(case, m):
            continue
        primary = judged[case.id] if case.id in judged else primary_agreement(case, m)
        entries[case.id] = baseline_entry(case, m, primary, (conditions or {}).get(case.id))
    return Baseline(suite=suite_name, cases=entries)


def nothing_parsed(case: ResolvedCase, m: CaseMeasurement) -> bool:
    """A case with a parser none of whose answers parsed: recording it would pin a baseline that no
    later run can fall below, so it is never recorded (docs/design.md §6, "Nothing measured")."""
    return case.answer is not None and m.samples_ok > 0 and m.metrics.parse_failures == m.samples_ok


def refused_cases(cases: Sequence[ResolvedCase], measurements: Sequence[CaseMeasurement]) -> tuple[str, ...]:
    """The cases `baseline_from_run` leaves out although they were measured: nothing of them parsed."""
    by_id = {m.id: m for m in measurements}
    return tuple(
        c.id for c in cases if (m := by_id.get(c.id)) is not None and m.samples_ok >= 2 and nothing_parsed(c, m)
    )


def baseline_entry(
    case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None, conditions: Conditions | None = None
) -> BaselineCase:
    """What the baseline keeps of one measured case; floats rounded as the file holds them, so that noise
    stays out of the diff and a baseline judged in memory is the one read back."""
    entry = BaselineCase(
        hash=case.definition_hash,
        samples=m.samples_ok,
        metrics=m.metrics,
        primary=primary,
        modal_completion=m.completions[0].text if m.completions else None,
        modal_answer=m.answers[0].answer if case.answer is not None and m.answers else None,
        completions=m.completions[:TOP],
        answers=m.answers[:TOP],
        fingerprints=m.fingerprints,
        sample_errors=m.sample_errors,
        conditions=conditions,
    )
    return from_json(BaselineCase, to_json(entry), what="a baseline entry", source=None)


def merge_baselines(old: Baseline | None, new: Baseline, suite_ids: Collection[str]) -> Baseline:
    """`new`, plus the old entries of cases still in the suite that this run did not measure.

    For runs of a subset (`--case`, `--shard`): recording them must not forget the other cases.
    """
    if old is None:
        return new
    kept = {cid: e for cid, e in old.cases.items() if cid in suite_ids and cid not in new.cases}
    return Baseline(suite=new.suite, cases={**kept, **new.cases})


def orphaned_entries(baseline: Baseline | None, suite_ids: Collection[str]) -> tuple[str, ...]:
    """The baseline's entries that no case of the suite matches (a renamed or deleted case), sorted."""
    return tuple(sorted(cid for cid in baseline.cases if cid not in suite_ids)) if baseline is not None else ()


def check_suite_name(baseline: Baseline, suite_name: str, path: str | os.PathLike[str], accepted: str | None) -> None:
    """A baseline recorded for another suite is bad input (exit 2) unless that name is accepted on purpose."""
    if baseline.suite in (suite_name, accepted):
        return
    raise BadInput(
        f"the baseline was recorded for suite {baseline.suite!r}, and this suite is {suite_name!r}: point "
        f"--baseline at this suite's own baseline, or compare with it anyway with --accept-baseline-suite "
        f"{baseline.suite!r} (Action input `accept-baseline-suite`)",
        path=str(path),
    )


# --- writing ------------------------------------------------------------------------------------


def dump_baseline(baseline: Baseline) -> str:
    return json.dumps(to_json(baseline), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_baseline(path: str | os.PathLike[str], baseline: Baseline) -> None:
    """Replace the file at `path` atomically: a crash mid-write leaves the old file whole."""
    try:
        write_atomic(path, dump_baseline(baseline).encode("utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot write the baseline: {exc.strerror or exc}", path=str(path)) from exc


# --- reading ------------------------------------------------------------------------------------

_REMEDY = "re-record it with --update-baseline"


def read_baseline(path: str | os.PathLike[str]) -> Baseline | None:
    """The baseline at `path`; None when there is none yet. Never modifies the file."""
    try:
        data = read_json_file(
            path,
            what="the baseline",
            hint=_REMEDY,
            limit=MAX_BASELINE_BYTES,
            restore=f"restore it from git or {_REMEDY}",
        )
    except FileNotFoundError:
        return None
    return from_json(Baseline, baseline_as_current(data), what="a baseline file", source=str(path))


def baseline_schema() -> dict[str, JSON]:
    """The published JSON Schema of the baseline file, generated from `Baseline`."""
    return json_schema(Baseline, title="A stabilitygate baseline (SUITE.baseline.json)")
