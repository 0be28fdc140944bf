"""Read a suite file: YAML -> Suite, with every error as one line naming the file and the line.

Resolving its cases (each case's provider validated by the model of its type) is the job of
`stabilitygate.cases`, which knows the provider types; this package knows none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from stabilitygate.bounded import MAX_SUITE_BYTES, read_bytes_bounded
from stabilitygate.errors import BadInput
from stabilitygate.suite.model import ResolvedCase, Suite
from stabilitygate.suite.schema_refs import check_answer_schemas
from stabilitygate.suite.sizes import check_sizes
from stabilitygate.suite.strict import NEVER_ECHOED
from stabilitygate.suite.variants import ResolvedVariant, check_remedies

Path_ = tuple[str | int, ...]
#: YAML aliases may stand for this many nodes in all, beyond the nodes the file writes: reusing a
#: provider block in every case fits, a "billion laughs" of nested aliases does not (docs/design.md §15).
MAX_ALIASED_NODES = 100_000
#: An integer of more digits than this is no count or setting of a suite (Python refuses past 4,300).
MAX_INTEGER_DIGITS = 100
_PYDANTIC_TAG = re.compile(r"[a-z][\w-]*\[.*\]|str|int|float|bool|none|dict|list")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity, as one loaded file
class ParsedSuite:
    """A suite file validated on its own, the file it came from and the line of each node.

    Its cases' providers are not resolved yet: that needs the provider types (`stabilitygate.cases`).
    """

    suite: Suite
    path: str
    lines: Mapping[Path_, int]

    def line_of(self, path: Path_) -> int | None:
        """The line of the deepest node on `path` that the file has."""
        for cut in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:cut]))
            if line is not None:
                return line
        return None


@dataclass(frozen=True, eq=False)
class LoadedSuite(ParsedSuite):
    """A suite ready to run: every case resolved (`stabilitygate.cases.load_suite` makes one)."""

    cases: tuple[ResolvedCase, ...] = ()
    # Each case's variants (`variants:`), by case id; measured only with `run --variants`.
    variants: Mapping[str, tuple[ResolvedVariant, ...]] = field(default_factory=dict)

    def resolved_cases(self) -> list[ResolvedCase]:
        return list(self.cases)

    def variant_cases(self) -> list[ResolvedCase]:
        """Every case's variants as the cases they sample (`CASE@NAME`), in suite order."""
        return [v.case for case in self.cases for v in self.variants.get(case.id, ())]


def read_suite_text(path: str | os.PathLike[str]) -> str:
    """The suite file's text; BadInput for a missing, unreadable or oversized (`MAX_SUITE_BYTES`) file."""
    shown = str(path)
    try:
        raw = read_bytes_bounded(path, limit=MAX_SUITE_BYTES, what="the suite")
    except FileNotFoundError as exc:
        raise BadInput("no such file", path=shown) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"cannot read the suite: {exc}", path=shown) from exc


def parse_suite_file(text: str, shown: str) -> ParsedSuite:
    """The suite in `text` (from the file `shown`), checked as far as the file alone can be."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        _check_expansion(node, shown)  # before anything walks the tree with its aliases expanded
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and context_mark and mark and context_mark.line != mark.line:
            problem += f" ({context.removeprefix('while ')} started at line {context_mark.line + 1})"
        raise BadInput(f"not valid YAML: {problem}", path=shown, line=mark.line + 1 if mark else None) from exc
    except RecursionError as exc:
        raise BadInput("not valid YAML: nested too deeply", path=shown) from exc
    if not isinstance(data, dict):
        raise BadInput("expected a mapping with version, name, provider and cases at the top", path=shown, line=1)
    lines: dict[Path_, int] = {}
    _LineIndex(lines, shown).visit(node, ())
    _check_duplicate_ids(data, lines, shown)
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise to_bad_input(exc, lines, shown) from exc
    parsed = ParsedSuite(suite, shown, lines)
    _check_canaries(parsed)
    check_sizes(parsed.suite, parsed.line_of, parsed.path)
    check_remedies(parsed.suite, parsed.line_of, parsed.path)
    check_answer_schemas(parsed.suite, parsed.line_of, parsed.path)
    return parsed


def _check_canaries(loaded: ParsedSuite) -> None:
    """`sampling.canaries` picks among the suite's cases: more than there are is a mistake."""
    canaries, count = loaded.suite.sampling.canaries, len(loaded.suite.cases)
    if canaries > count:
        raise BadInput(
            f"sampling.canaries: {canaries} is more than the suite's {count} cases (expected 0 to {count})",
            path=loaded.path,
            line=loaded.line_of(("sampling", "canaries")),
        )


def _check_expansion(root: yaml.Node | None, shown: str) -> None:
    """BadInput when the file's aliases stand for more than `MAX_ALIASED_NODES` nodes beyond the ones
    it writes (or for themselves: a cycle), or a scalar is an integer too long to be a number of the
    suite. Each distinct node is visited once and its subtree's size summed from its children's, so a
    bomb costs no more time than its own text."""
    if root is None:
        return
    sizes: dict[int, int] = {}  # id(node) -> nodes in its subtree, aliases expanded (0: in progress)
    finished: list[yaml.Node] = []
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _children(node))
            finished.append(node)
        elif id(node) in sizes:
            if sizes[id(node)] == 0:  # met again on its own way down: it contains itself
                raise BadInput(
                    "not valid YAML: an alias refers to a node that contains it",
                    path=shown,
                    line=node.start_mark.line + 1,
                )
        else:
            if isinstance(node, yaml.ScalarNode):
                _check_integer(node, shown)
            sizes[id(node)] = 0
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))
    allowed = MAX_ALIASED_NODES + len(sizes)
    for node in finished:  # the innermost node past the bound is where the file says too much
        if sizes[id(node)] > allowed:
            raise BadInput(
                f"not valid YAML: its aliases stand for more than {MAX_ALIASED_NODES:,} nodes besides the "
                "ones it writes (nested aliases expand exponentially); repeat fewer blocks by alias",
                path=shown,
                line=node.start_mark.line + 1,
            )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_integer(node: yaml.ScalarNode, shown: str) -> None:
    if node.tag == "tag:yaml.org,2002:int" and sum(ch.isdigit() for ch in node.value) > MAX_INTEGER_DIGITS:
        raise BadInput(
            f"a number of {sum(ch.isdigit() for ch in node.value):,} digits (expected at most {MAX_INTEGER_DIGITS})",
            path=shown,
            line=node.start_mark.line + 1,
        )


class _LineIndex:
    """The line of every node, by its path in the document (aliases expanded: bounded beforehand)."""

    def __init__(self, lines: dict[Path_, int], shown: str) -> None:
        self.lines = lines
        self.shown = shown

    def visit(self, node: yaml.Node | None, path: Path_) -> None:
        if node is None:
            return
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            keys: set[object] = set()
            for key_node, value_node in node.value:
                key = key_node.value
                if key in keys:
                    raise BadInput(f"duplicate key {key!r}", path=self.shown, line=key_node.start_mark.line + 1)
                keys.add(key)
                self.lines[(*path, key)] = key_node.start_mark.line + 1
                self.visit(value_node, (*path, key))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self.visit(item, (*path, i))


def _check_duplicate_ids(data: Mapping[str, object], lines: Mapping[Path_, int], shown: str) -> None:
    cases = data.get("cases")
    if not isinstance(cases, list):
        return
    first: dict[object, int] = {}
    for i, case in enumerate(cases):
        if isinstance(case, dict) and isinstance(case.get("id"), str | int):
            cid = case["id"]
            if cid in first:
                raise BadInput(
                    f"duplicate case id {cid!r} (first used at line {lines.get(('cases', first[cid]))})",
                    path=shown,
                    line=lines.get(("cases", i, "id")),
                )
            first[cid] = i


def to_bad_input(
    exc: ValidationError,
    lines: Mapping[Path_, int],
    shown: str,
    *,
    root: type[BaseModel] = Suite,
    place: Callable[[Path_], Path_] | None = None,
) -> BadInput:
    """The first error of `exc` as one line at its line in the file.

    `root` is the model that was validated; `place`, when given, maps a location inside it to the
    path in the file (a provider mapping's keys may come from the suite or from the case).
    """
    err = exc.errors(include_url=False)[0]
    loc: Path_ = tuple(err["loc"])
    # pydantic appends the union member or a validator name to some locations ("list[str]",
    # "function-after[...]"); keep the data path, whose keys may be anything YAML allows.
    keep_last = err["type"] == "extra_forbidden"  # there the last part is the user's unknown key
    head, tail = (loc[:-1], loc[-1:]) if keep_last else (loc, ())
    loc = tuple(p for p in head if not (isinstance(p, str) and _PYDANTIC_TAG.fullmatch(p))) + tail
    inner = loc  # the location inside `root`
    if place is not None:
        loc = place(loc)
    where = dotted(loc)
    if err["type"] == "extra_forbidden" and loc:
        parent = _model_at(inner[:-1], root)
        allowed = ", ".join(sorted(_field_names(parent))) if parent else ""
        message = f"unknown key {loc[-1]!r}" + (f" at {dotted(loc[:-1])}" if loc[:-1] else "")
        if allowed:
            message += f" (expected one of: {allowed})"
    elif err["type"] == "missing":
        message = f"missing required key {where!r}"
    else:
        got = err.get("input")
        secret = any(isinstance(part, str) and part in NEVER_ECHOED for part in loc)
        shown_input = "" if secret or isinstance(got, dict | list) else f", got {got!r}"
        msg = str(err["msg"]).removeprefix("Value error, ")
        message = f"{where}: {msg}{shown_input}" if where else msg
    line = None
    for cut in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:cut]))
        if line is not None:
            break
    return BadInput(message, path=shown, line=line)


def dotted(loc: Path_) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(loc: Path_, root: type[BaseModel] = Suite) -> type[BaseModel] | None:
    """The pydantic model that describes the node at `loc` (for listing the keys it accepts)."""
    model: type[BaseModel] | None = root
    keyed = False  # the last field maps names to models (`variants:`): the next part is a name
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        field = _fields_by_alias(model).get(part)
        if field is None:
            return None
        model = _inner_model(field.annotation)
        keyed = _is_mapping(field.annotation)
    return model


def _is_mapping(annotation: object) -> bool:
    """Whether the annotation (or a member of its union) is a dict."""
    if getattr(annotation, "__origin__", None) is dict:
        return True
    return any(_is_mapping(arg) for arg in getattr(annotation, "__args__", ()) or () if arg is not annotation)


def _fields_by_alias(model: type[BaseModel]) -> dict[str, FieldInfo]:
    return {(f.alias or name): f for name, f in model.model_fields.items()}


def _field_names(model: type[BaseModel]) -> list[str]:
    return list(_fields_by_alias(model))


def _inner_model(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
