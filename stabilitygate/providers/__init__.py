"""The providers, chosen by the suite's `provider.type` and imported only when a suite uses them."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from stabilitygate.errors import BadInput
from stabilitygate.providers.interface import Provider
from stabilitygate.suite.model import ProviderConfig

# type -> (module, class); imported lazily so that `local` (torch) costs nothing to an `openai` suite.
REGISTRY: dict[str, tuple[str, str]] = {
    "openai": ("stabilitygate.providers.openai", "OpenAIProvider"),
    "local": ("stabilitygate.providers.local", "LocalProvider"),
    "anthropic": ("stabilitygate.providers.anthropic", "AnthropicProvider"),
    "http": ("stabilitygate.providers.http_app", "HttpAppProvider"),
    "command": ("stabilitygate.providers.command", "CommandProvider"),
}


def make_provider(
    config: ProviderConfig, *, environ: Mapping[str, str] | None = None, timeout_s: float = 60
) -> Provider:
    """A provider for `config` (type `openai` when unset); BadInput for an unknown type."""
    kind = config.type or "openai"
    if kind not in REGISTRY:
        raise BadInput(f"unknown provider type {kind!r} (expected one of: {', '.join(REGISTRY)})")
    cls = _provider_class(kind)
    if kind == "local":
        # The local model reads no environment: it has no key and no headers.
        provider: Provider = cls(config, timeout_s=timeout_s)
    else:
        provider = cls(config, environ=environ, timeout_s=timeout_s)
    return provider


def _provider_class(kind: str) -> type[Provider]:
    module_name, class_name = REGISTRY[kind]
    return getattr(importlib.import_module(module_name), class_name)


def fingerprint_note(kind: str | None) -> str | None:
    """A sentence for the report when the provider's API has no seed or system_fingerprint."""
    kind = kind or "openai"
    if kind == "local" or kind not in REGISTRY:  # local: importing it would load torch; it has one
        return None
    if _provider_class(kind).has_fingerprint:
        return None
    return (
        f"the {kind} provider has no seed or system_fingerprint: a change of the backend behind it "
        "cannot be seen, only its effect on the numbers"
    )
