"""Where a run sends each key it reads: one log line per host, before the first request.

A pull request's suite decides the hosts its providers, variants and entailment judges call, and each
of them is handed the key its `api_key_env` (or a header's `${VAR}`) names: a suite that points
`base_url` elsewhere sends the repository's key there. The log says so before anything is sent, so the
job's log shows where every key went (docs/design.md §12, "Where keys go").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stabilitygate.pipeline.conditions import endpoint_host
from stabilitygate.providers.config import HeaderedConfig, header_variables
from stabilitygate.providers.registry import provider_class
from stabilitygate.suite.model import ProviderConfig, ResolvedCase

log = logging.getLogger("stabilitygate")
#: The senders a line names before it counts the rest.
SHOWN_SENDERS = 3


@dataclass(frozen=True)
class KeyRoute:
    """The keys one host is sent, and the cases (variants, judges) that send them."""

    host: str
    variables: tuple[str, ...]
    senders: tuple[str, ...]

    def line(self) -> str:
        shown = ", ".join(self.senders[:SHOWN_SENDERS])
        more = len(self.senders) - SHOWN_SENDERS
        senders = shown + (f" and {more} more" if more > 0 else "")
        return f"keys sent to {self.host}: {', '.join(self.variables)} (by {senders})"


def key_routes(cases: Iterable[ResolvedCase], environ: Mapping[str, str]) -> list[KeyRoute]:
    """Every host a key of `environ` is sent to by these cases' providers and judges, by host."""
    routes: dict[str, tuple[set[str], list[str]]] = {}
    for case in cases:
        senders = [(case.provider, case.id), (case.entailment_judge, f"{case.id}'s entailment judge")]
        for config, sender in senders:
            if config is None or not (keys := sent_keys(config, environ)):
                continue
            variables, named = routes.setdefault(_host(config), (set(), []))
            variables |= keys
            named.append(sender)
    return [KeyRoute(host, tuple(sorted(v)), tuple(s)) for host, (v, s) in sorted(routes.items())]


def say_key_routes(cases: Iterable[ResolvedCase], environ: Mapping[str, str]) -> None:
    for route in key_routes(cases, environ):
        log.info("%s", route.line())


def sent_keys(config: ProviderConfig, environ: Mapping[str, str]) -> set[str]:
    """The variables set in `environ` whose values the provider sends: its key and its headers' ${VAR}s."""
    names = {provider_class(config.type).key_env(config)}
    if isinstance(config, HeaderedConfig):
        names |= header_variables(config.headers or {})
    return {name for name in names if name and environ.get(name)}


def _host(config: ProviderConfig) -> str:
    """The host and port; a `command` is handed its keys in its environment, and may send them anywhere."""
    found = endpoint_host(config)
    if found is not None:
        return found
    return f"the {config.type} provider's program (in its environment: it may send them on anywhere)"
