"""Layers that point one way: every module imports, and the import graph has no hidden circles.

Imports are read with `ast` from every line of a module, inside functions and `if TYPE_CHECKING:`
blocks included, so that a circle cannot hide behind an import made on use.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stabilitygate"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports_of(module: str) -> frozenset[str]:
    """The stabilitygate modules `module` imports anywhere in its text (a package stands for its __init__)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found.update(name for name in names if name in MODULES)
    return frozenset(found - {module})


def reaches(start: str, goal: str) -> bool:
    """Whether `start` imports `goal`, directly or through other modules."""
    seen, todo = set(), [start]
    while todo:
        current = todo.pop()
        for nxt in imports_of(current):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith(".__main__")))  # that one runs
def test_every_module_imports(module: str) -> None:
    assert importlib.import_module(module).__name__ == module


def test_the_suite_package_imports_nothing_of_the_providers() -> None:
    for module in MODULES:
        if module.startswith("stabilitygate.suite.") or module == "stabilitygate.suite":
            assert not any(name.startswith("stabilitygate.providers") for name in imports_of(module)), module


def test_secrets_imports_no_provider() -> None:
    assert not any(name.startswith("stabilitygate.providers") for name in imports_of("stabilitygate.secrets"))
    assert not reaches("stabilitygate.secrets", "stabilitygate.providers.registry")


def test_the_version_module_imports_nothing() -> None:
    tree = ast.parse(MODULES["stabilitygate.version"].read_text())
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    for module in ("stabilitygate.report.model", "stabilitygate.providers.local"):
        assert "stabilitygate.version" in imports_of(module) and "stabilitygate" not in imports_of(module)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("stabilitygate.report.model", "stabilitygate.report.schema"),
        ("stabilitygate.suite.model", "stabilitygate.suite.expected"),
        ("stabilitygate.suite.load", "stabilitygate.providers.registry"),
        ("stabilitygate.secrets", "stabilitygate.providers.command"),
        ("stabilitygate.secrets", "stabilitygate.providers.httpbase"),
    ],
)
def test_no_circle_between(one: str, other: str) -> None:
    assert not (reaches(one, other) and reaches(other, one)), f"{one} and {other} import each other"


def test_the_graph_reader_sees_imports_inside_functions() -> None:
    # cases.py imports the registry at the top; the CLI imports it inside a command, on use.
    assert "stabilitygate.providers.registry" in imports_of("stabilitygate.cases")
    assert "stabilitygate.cases" in imports_of("stabilitygate.cli")
