"""What is API: the package's names and `API_MODULES`, held to what the docs tell a user to import."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import stabilitygate
from stabilitygate.errors import BadInput, CannotMeasure, GateError

ROOT = Path(__file__).resolve().parents[1]


def section(path: str, heading: str) -> str:
    text = (ROOT / path).read_text()
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


#: The parts of the docs that tell a library user or a plugin's author what to import.
TOLD = {
    "README.md": section("README.md", "## As a library"),
    "docs/providers.md": section("docs/providers.md", "## Adding a provider"),
}


def modules_named(text: str) -> set[str]:
    """The package's modules a text imports from or names (`stabilitygate.x.y`, `from stabilitygate.x import`)."""
    named = set()
    for dotted in re.findall(r"\bstabilitygate(?:\.\w+)+", text):
        while dotted != "stabilitygate":  # `stabilitygate.cases.load_suite`: the module is `stabilitygate.cases`
            try:
                importlib.import_module(dotted)
            except ModuleNotFoundError:
                dotted = dotted.rsplit(".", 1)[0]
                continue
            named.add(dotted)
            break
    return named


@pytest.mark.parametrize("doc", sorted(TOLD))
def test_every_module_the_docs_import_from_is_api(doc: str) -> None:
    # The plugins' entry-point group is named like the providers' package, and is no module to import.
    group = stabilitygate.ENTRY_POINT_GROUP
    named = modules_named(TOLD[doc].replace(f"`{group}`", "").replace(f'"{group}"', ""))
    assert named - set(stabilitygate.API_MODULES) == set()


def test_the_readme_lists_every_api_module() -> None:
    assert modules_named(TOLD["README.md"]) >= set(stabilitygate.API_MODULES)


def test_every_name_of_the_package_resolves_and_every_api_module_declares_its_names() -> None:
    for name in stabilitygate.__all__:
        assert getattr(stabilitygate, name) is not None, name
    for module in stabilitygate.API_MODULES:
        declared = importlib.import_module(module).__all__
        assert declared and all(hasattr(importlib.import_module(module), n) for n in declared), module


def test_the_errors_share_the_exported_base() -> None:
    assert stabilitygate.GateError is GateError
    assert BadInput.__mro__[1] is GateError and CannotMeasure.__mro__[1] is GateError
    assert issubclass(stabilitygate.FatalProviderError, stabilitygate.ProviderError)


def test_a_plugin_needs_nothing_but_the_package_s_names() -> None:
    from stabilitygate.providers.registry import ENTRY_POINT_GROUP
    from stabilitygate.suite.model import ProviderConfig

    assert stabilitygate.ENTRY_POINT_GROUP == ENTRY_POINT_GROUP == "stabilitygate.providers"
    assert issubclass(stabilitygate.KeyedConfig, stabilitygate.ProviderConfig)
    assert stabilitygate.ProviderConfig is ProviderConfig
