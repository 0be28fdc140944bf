"""The baseline file: what a recorded run looked like, per case, committed next to the suite.

Written with sorted keys, stable formatting and no timestamps, so that re-recording an unchanged
run gives the same bytes and an intended change reads well in the pull request's diff. Written
atomically: a crash mid-write leaves the previous file whole. Read strictly: a damaged file is an
error (exit 2) and is never rewritten behind the user's back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator

from stabilitygate.atomic import write_atomic
from stabilitygate.bounded import MAX_BASELINE_BYTES
from stabilitygate.errors import BadInput
from stabilitygate.jsonfile import AGREEMENT_SCHEMA, COUNT_SCHEMA, check_against, read_json_file
from stabilitygate.judge.agreement import primary_agreement
from stabilitygate.plain import plain
from stabilitygate.results import Agreement, CaseMeasurement, CaseVerdict
from stabilitygate.suite.model import ResolvedCase

SCHEMA_VERSION = 1
TOP = 5  # completions and answers kept per case: enough to show what changed, small in a diff


@dataclass(frozen=True)
class BaselineCase:
    hash: str
    samples: int  # successful samples of the recorded run (n)
    metrics: dict[str, Any]
    primary: dict[str, Any] | None  # {"metric", "k", "n"}
    modal_completion: str | None
    modal_answer: Any
    completions: list[dict[str, Any]] = field(default_factory=list)  # top TOP, [{"text", "count"}]
    answers: list[dict[str, Any]] = field(default_factory=list)  # top TOP, [{"answer", "count"}]
    fingerprints: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "hash": self.hash,
            "samples": self.samples,
            "metrics": self.metrics,
            "primary": self.primary,
            "modal_completion": self.modal_completion,
            "modal_answer": self.modal_answer,
            "completions": self.completions,
            "answers": self.answers,
            "fingerprints": self.fingerprints,
        }


@dataclass(frozen=True)
class Baseline:
    suite: str
    cases: dict[str, BaselineCase]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "suite": self.suite,
            "cases": {cid: entry.to_json() for cid, entry in self.cases.items()},
        }


# --- building -----------------------------------------------------------------------------------


def baseline_from_run(
    cases: Sequence[ResolvedCase],
    measurements: Sequence[CaseMeasurement],
    suite_name: str,
    *,
    verdicts: Sequence[CaseVerdict] = (),
) -> Baseline:
    """The baseline this run would record. Cases measured on fewer than 2 samples are left out.

    A case's primary agreement comes from its verdict when one is given (the judge computes it once
    per case), else it is computed here.
    """
    by_id = {m.id: m for m in measurements}
    judged = {v.id: v.primary for v in verdicts}
    entries: dict[str, BaselineCase] = {}
    for case in cases:
        m = by_id.get(case.id)
        if m is None or m.samples_ok < 2:
            continue
        primary = judged[case.id] if case.id in judged else primary_agreement(case, m)
        entries[case.id] = baseline_entry(case, m, primary)
    return Baseline(suite=suite_name, cases=entries)


def baseline_entry(case: ResolvedCase, m: CaseMeasurement, primary: Agreement | None) -> BaselineCase:
    """What the baseline keeps of one measured case; floats rounded so that noise stays out of the diff."""
    return BaselineCase(
        hash=case.definition_hash,
        samples=m.samples_ok,
        metrics=plain(m.metrics),
        primary=primary.to_json() if primary else None,
        modal_completion=m.completions[0]["text"] if m.completions else None,
        modal_answer=plain(m.answers[0]["answer"]) if case.answer is not None and m.answers else None,
        completions=plain(m.completions[:TOP]),
        answers=plain(m.answers[:TOP]),
        fingerprints=plain(m.fingerprints),
    )


def merge_baselines(old: Baseline | None, new: Baseline, suite_ids: Collection[str]) -> Baseline:
    """`new`, plus the old entries of cases still in the suite that this run did not measure.

    For runs of a subset (`--case`, `--shard`): recording them must not forget the other cases.
    """
    if old is None:
        return new
    kept = {cid: e for cid, e in old.cases.items() if cid in suite_ids and cid not in new.cases}
    return Baseline(suite=new.suite, cases={**kept, **new.cases})


# --- writing ------------------------------------------------------------------------------------


def dump_baseline(baseline: Baseline) -> str:
    return json.dumps(baseline.to_json(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_baseline(path: str | os.PathLike[str], baseline: Baseline) -> None:
    """Replace the file at `path` atomically: a crash mid-write leaves the old file whole."""
    try:
        write_atomic(path, dump_baseline(baseline).encode("utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot write the baseline: {exc.strerror or exc}", path=str(path)) from exc


# --- reading ------------------------------------------------------------------------------------

_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["hash", "samples", "metrics", "primary", "completions", "answers", "fingerprints"],
    "properties": {
        "hash": {"type": "string"},
        "samples": COUNT_SCHEMA,
        "metrics": {"type": "object"},
        "primary": AGREEMENT_SCHEMA,
        "modal_completion": {"type": ["string", "null"]},
        "completions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["text", "count"],
                "properties": {"text": {"type": "string"}, "count": COUNT_SCHEMA},
            },
        },
        "answers": {
            "type": "array",
            "items": {"type": "object", "required": ["answer", "count"], "properties": {"count": COUNT_SCHEMA}},
        },
        "fingerprints": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["fingerprint", "count"],
                "properties": {"fingerprint": {"type": ["string", "null"]}, "count": COUNT_SCHEMA},
            },
        },
    },
}
BASELINE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "suite", "cases"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "suite": {"type": "string"},
        "cases": {"type": "object", "additionalProperties": _ENTRY_SCHEMA},
    },
}
_VALIDATOR = Draft202012Validator(BASELINE_SCHEMA)


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
    _validate(data, str(path))
    return _baseline_from_json(data)


def _validate(data: Any, shown: str) -> None:
    """The schema, then what a schema cannot say (k <= n); the first error by position is named."""
    check_against(data, _VALIDATOR, what="a baseline file", source=shown)
    for cid, entry in data["cases"].items():
        primary = entry["primary"]
        if primary is not None and primary["k"] > primary["n"]:
            raise BadInput(f"not a baseline file this version can read: at cases/{cid}/primary: k > n", path=shown)


def _baseline_from_json(data: dict[str, Any]) -> Baseline:
    """A validated baseline document as typed data."""
    return Baseline(
        suite=data["suite"],
        cases={
            cid: BaselineCase(
                hash=e["hash"],
                samples=e["samples"],
                metrics=e["metrics"],
                primary=e["primary"],
                modal_completion=e.get("modal_completion"),
                modal_answer=e.get("modal_answer"),
                completions=e["completions"],
                answers=e["answers"],
                fingerprints=e["fingerprints"],
            )
            for cid, e in data["cases"].items()
        },
    )
