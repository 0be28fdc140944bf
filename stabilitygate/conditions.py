"""How a case's samples were drawn, as the report and the baseline record it, and how two records differ.

The same prompt can be stable at concurrency 1 and unstable at 8 (a server that batches requests
together computes each one differently), so a regression is read beside the conditions it was
measured under (docs/design.md §16, "The conditions of a run"). Only a live run knows them; a
scored run and an older baseline have none, and then nothing is compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from stabilitygate.typed_json import JSON, Count, omitted_when_default

__all__ = ["Conditions", "Idempotency", "Probe", "differences"]

#: `per_sample`: each sample its own idempotency key; `shared`: one key for all of a case's samples.
Idempotency = Literal["per_sample", "shared"]
#: `concurrency`: half of each case's samples drawn one at a time, half under load (docs/design.md §16).
Probe = Literal["concurrency"]


@dataclass(frozen=True)
class Conditions:
    """How one case's samples were drawn."""

    provider: str  # the provider type
    host: str | None = None  # the endpoint's host (and port); None for providers without one
    concurrency: Count | None = None  # requests in flight over the run
    params: Mapping[str, JSON] = field(default_factory=dict)  # the parameters actually sent
    fingerprints: tuple[str, ...] = ()  # the system_fingerprints seen; empty: none were sent
    idempotency: Idempotency = omitted_when_default("per_sample")
    probe: Probe | None = omitted_when_default()  # "concurrency": half the samples were drawn alone


def differences(baseline: Conditions | None, now: Conditions | None) -> tuple[str, ...]:
    """Sentences naming what differs between the baseline's conditions and this run's (none without both)."""
    if baseline is None or now is None:
        return ()
    said = []
    if baseline.concurrency != now.concurrency and baseline.concurrency is not None and now.concurrency is not None:
        said.append(f"baseline drawn at concurrency {baseline.concurrency}, this run at {now.concurrency}")
    if baseline.provider != now.provider:
        said.append(f"baseline drawn with provider {baseline.provider}, this run with {now.provider}")
    if baseline.host != now.host:
        said.append(f"baseline drawn from {_host(baseline.host)}, this run from {_host(now.host)}")
    if dict(baseline.params) != dict(now.params):
        said.append(f"baseline sent params {_json(baseline.params)}, this run {_json(now.params)}")
    if set(baseline.fingerprints) != set(now.fingerprints):
        said.append(
            f"the baseline's server sent {_fingerprints(baseline.fingerprints)}, this run's "
            f"{_fingerprints(now.fingerprints)}"
        )
    if baseline.idempotency != now.idempotency:
        said.append(f"baseline keyed {_keys(baseline.idempotency)}, this run {_keys(now.idempotency)}")
    if baseline.probe != now.probe:
        said.append(f"baseline drawn {_probe(baseline.probe)}, this run {_probe(now.probe)}")
    return tuple(said)


def _host(host: str | None) -> str:
    return f"host {host}" if host else "no network endpoint"


def _json(params: Mapping[str, JSON]) -> str:
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _fingerprints(fingerprints: tuple[str, ...]) -> str:
    if not fingerprints:
        return "no system_fingerprint"
    return ("system_fingerprint " if len(fingerprints) == 1 else "system_fingerprints ") + ", ".join(fingerprints)


def _keys(idempotency: Idempotency) -> str:
    return "one idempotency key for all samples" if idempotency == "shared" else "one idempotency key per sample"


def _probe(probe: Probe | None) -> str:
    return "half alone and half under load (sampling.probe)" if probe else "all under the run's concurrency"
