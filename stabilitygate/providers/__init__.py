"""The providers, chosen by the suite's `provider.type` and imported only when a suite uses them."""

from __future__ import annotations

from stabilitygate.providers.registry import fingerprint_note, make_provider, provider_class, provider_types

__all__ = ["fingerprint_note", "make_provider", "provider_class", "provider_types"]
