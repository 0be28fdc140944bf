"""Provider types by name: one line per built-in, and third parties through entry points.

Modules are imported only when a suite uses their type, and none imports torch when imported (the
`local` provider loads it with its model), so `validate` and `--help` never import it.
A third party registers a type in the entry-point group `stabilitygate.providers`:

    [project.entry-points."stabilitygate.providers"]
    echo = "echo_provider:EchoProvider"

The class is a `Provider` whose `config_model` has `type: Literal["echo"]`; it joins the union that
validates suites as soon as it is installed (docs/providers.md).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Annotated, Union, get_args

from pydantic import Field, TypeAdapter

from stabilitygate.errors import BadInput
from stabilitygate.providers.interface import Provider
from stabilitygate.suite.model import DEFAULT_PROVIDER_TYPE as DEFAULT_TYPE
from stabilitygate.suite.model import ProviderConfig

ENTRY_POINT_GROUP = "stabilitygate.providers"

# type -> "module:class"; adding a built-in provider is its module plus one line here.
BUILT_IN: Mapping[str, str] = {
    "openai": "stabilitygate.providers.openai:OpenAIProvider",
    "local": "stabilitygate.providers.local:LocalProvider",
    "anthropic": "stabilitygate.providers.anthropic:AnthropicProvider",
    "http": "stabilitygate.providers.http_app:HttpAppProvider",
    "command": "stabilitygate.providers.command:CommandProvider",
}


def provider_types() -> list[str]:
    """Every type a suite may name: the built-ins, then the installed plugins (none imported)."""
    return [*BUILT_IN, *sorted(name for name in _plugins() if name not in BUILT_IN)]


def provider_class(kind: object) -> type[Provider]:
    """The class of provider type `kind` (the default type when None); BadInput for an unknown type."""
    kind = DEFAULT_TYPE if kind is None else kind
    if isinstance(kind, str) and kind in BUILT_IN:
        return _built_in(kind)
    plugin = _plugins().get(kind) if isinstance(kind, str) else None
    if plugin is None:
        raise BadInput(f"unknown provider type {kind!r} (expected one of: {', '.join(provider_types())})")
    return _plugin_class(plugin)


def make_provider(
    config: ProviderConfig | Mapping[str, object],
    *,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = 60,
    run_secrets: Iterable[str] = (),
) -> Provider:
    """A provider for `config` (a config or a raw mapping); BadInput for an unknown type or a config
    that type cannot use. `run_secrets`: every secret of the run, redacted from its messages too."""
    kind = config.type if isinstance(config, ProviderConfig) else config.get("type", DEFAULT_TYPE)
    return provider_class(kind).create(config, environ=environ, timeout_s=timeout_s, run_secrets=run_secrets)


def fingerprint_note(kind: str | None) -> str | None:
    """A sentence for the report when the provider's API has no seed or system_fingerprint."""
    try:
        cls = provider_class(kind)
    except BadInput:
        return None
    if cls.has_fingerprint:
        return None
    return (
        f"the {kind or DEFAULT_TYPE} provider has no seed or system_fingerprint: a change of the backend "
        "behind it cannot be seen, only its effect on the numbers"
    )


def config_union(kinds: Iterable[str] | None = None) -> TypeAdapter[ProviderConfig]:
    """The config models of `kinds` (default: every registered type) as one pydantic union
    discriminated on `type`; imports their modules."""
    chosen = provider_types() if kinds is None else list(kinds)
    return _union(tuple(provider_class(kind).config_model for kind in chosen))


@functools.cache
def _union(models: tuple[type[ProviderConfig], ...]) -> TypeAdapter[ProviderConfig]:
    # The members are known at run time only: to mypy the union is their base.
    member: object = models[0] if len(models) == 1 else Union[models]  # noqa: UP007
    adapter: TypeAdapter[ProviderConfig] = TypeAdapter(Annotated[member, Field(discriminator="type")])
    return adapter


@functools.cache
def _built_in(kind: str) -> type[Provider]:
    module_name, _, class_name = BUILT_IN[kind].partition(":")
    return _provider_class_checked(getattr(importlib.import_module(module_name), class_name), kind, BUILT_IN[kind])


def _plugins() -> dict[str, EntryPoint]:
    # Not cached: a plugin installed while the process runs (as in tests) is seen at once.
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _plugin_class(entry: EntryPoint) -> type[Provider]:
    where = f"entry point {entry.name} = {entry.value}" + (f" of {entry.dist.name}" if entry.dist else "")
    try:
        cls = entry.load()
    except Exception as exc:  # a broken plugin is the suite's problem, not a crash
        raise BadInput(f"provider type {entry.name!r}: cannot load {where}: {exc}") from exc
    return _provider_class_checked(cls, entry.name, where)


def _provider_class_checked(cls: object, kind: str, where: str) -> type[Provider]:
    """A registered class must be a Provider whose config model is tagged with the type's name."""
    if not (isinstance(cls, type) and issubclass(cls, Provider)):
        raise BadInput(f"provider type {kind!r}: {where} is not a stabilitygate Provider class")
    tags = get_args(cls.config_model.model_fields["type"].annotation)
    if tags != (kind,):
        raise BadInput(f"provider type {kind!r}: {where} has a config_model whose `type` is not Literal[{kind!r}]")
    return cls
