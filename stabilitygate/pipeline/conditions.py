"""How live sampling drew each case, and how that differs from the baseline (docs/design.md §16.4).

Only a live run knows it: `run` hands the conditions to `evaluate`, which records them in the
baseline and in the report's `run.conditions` (never in the cases, so that `score` of the run's
samples gives the run's cases). `score` and `merge` know none and compare nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from stabilitygate.conditions import Conditions, Probe, differences
from stabilitygate.judge.baseline import Baseline
from stabilitygate.judge.diagnosis import concurrency_advice
from stabilitygate.providers.openai import DROPPED_PARAMS
from stabilitygate.report.model import CaseResult, ConditionsFacts
from stabilitygate.samples import Sample
from stabilitygate.suite.model import ProviderConfig, ResolvedCase
from stabilitygate.typed_json import JSON

#: What stands for the endpoint of a provider that runs in the gate's own process.
IN_PROCESS = "in-process"


def run_conditions(
    cases: Sequence[ResolvedCase], samples: Sequence[Sample], concurrency: int, probe: Probe | None
) -> dict[str, Conditions]:
    """Each case's conditions, from its provider, the run's settings and the fingerprints its samples saw."""
    seen: dict[str, set[str]] = {}
    for sample in samples:
        if sample.fingerprint:
            seen.setdefault(sample.case, set()).add(sample.fingerprint)
    return {c.id: conditions_of(c, tuple(sorted(seen.get(c.id, ()))), concurrency, probe) for c in cases}


def conditions_of(
    case: ResolvedCase, fingerprints: tuple[str, ...], concurrency: int | None, probe: Probe | None
) -> Conditions:
    provider = case.provider
    params: dict[str, JSON] = {k: v for k, v in (provider.params or {}).items() if k not in DROPPED_PARAMS}
    return Conditions(
        provider=provider.type,
        host=endpoint_host(provider),
        concurrency=concurrency,
        params=params,
        fingerprints=fingerprints,
        idempotency=case.idempotency,
        probe=probe,
    )


def conditions_facts(
    results: Sequence[CaseResult],
    cases: Sequence[ResolvedCase],
    conditions: Mapping[str, Conditions],
    baseline: Baseline | None,
) -> ConditionsFacts:
    """The report's `run.conditions`: each case's, what differs from its baseline entry (same definition
    hash, conditions recorded), and the suggestion a different concurrency supports."""
    by_id = {c.id: c for c in cases}
    differ: dict[str, tuple[str, ...]] = {}
    advice: dict[str, str] = {}
    for result in results:
        case = by_id.get(result.id)
        entry = baseline.entry_for(case) if baseline is not None and case is not None else None
        if entry is None:
            continue
        said = differences(entry.conditions, conditions.get(result.id))
        if not said:
            continue
        differ[result.id] = said
        unique = result.metrics.unique_completions or 0
        found = concurrency_advice(said, result.verdict, unique)
        if found is not None:
            advice[result.id] = found
    return ConditionsFacts(cases=dict(conditions), differ=differ, advice=advice)


def endpoint_host(provider: ProviderConfig) -> str | None:
    """The host (and port) the provider sends to, never its user or password; None without an endpoint."""
    if provider.type == "local":
        return IN_PROCESS
    url = provider.endpoint()
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    return f"{host}:{port}" if port is not None else host
