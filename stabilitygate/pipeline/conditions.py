"""The conditions each case's samples were drawn under, from the case and the run's sampling facts.

Only a live run (or the merge of live shards) has sampling facts, so only it records conditions;
the baseline keeps them beside the figures they explain (docs/design.md §15, "The conditions of a run").
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

from stabilitygate.conditions import Conditions
from stabilitygate.providers.openai import DROPPED_PARAMS
from stabilitygate.report.model import SamplingFacts
from stabilitygate.results import CaseMeasurement
from stabilitygate.suite.model import ProviderConfig, ResolvedCase
from stabilitygate.typed_json import JSON

#: What stands for the endpoint of a provider that runs in the gate's own process.
IN_PROCESS = "in-process"


def with_conditions(
    m: CaseMeasurement, case: ResolvedCase, sampling: SamplingFacts | None, probe: str | None
) -> CaseMeasurement:
    """The measurement with the conditions it was drawn under (unchanged without sampling facts)."""
    if sampling is None:
        return m
    return replace(m, conditions=conditions_of(case, m, sampling.concurrency, probe))


def conditions_of(case: ResolvedCase, m: CaseMeasurement, concurrency: int | None, probe: str | None) -> Conditions:
    provider = case.provider
    params: dict[str, JSON] = {k: v for k, v in (provider.params or {}).items() if k not in DROPPED_PARAMS}
    return Conditions(
        provider=provider.type,
        host=endpoint_host(provider),
        concurrency=concurrency,
        params=params,
        fingerprints=tuple(sorted(row.fingerprint for row in m.fingerprints if row.fingerprint)),
        idempotency=case.idempotency,
        probe=probe,
    )


def endpoint_host(provider: ProviderConfig) -> str | None:
    """The host (and port) the provider sends to, never its user or password; None without an endpoint."""
    if provider.type == "local":
        return IN_PROCESS
    url = getattr(provider, "base_url", None) or getattr(provider, "url", None)
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host:
        return None
    return f"{host}:{port}" if port is not None else host
