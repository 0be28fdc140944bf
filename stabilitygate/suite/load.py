"""Read a suite file: YAML -> Suite, with every error as one line naming the file and the line."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from stabilitygate.errors import BadInput
from stabilitygate.suite.model import DEFAULT_PROVIDER_TYPE, Message, ProviderConfig, ResolvedCase, Suite

if TYPE_CHECKING:
    from stabilitygate.providers.interface import Provider

Path_ = tuple[str | int, ...]
_PYDANTIC_TAG = re.compile(r"[a-z][\w-]*\[.*\]|str|int|float|bool|none|dict|list")


class LoadedSuite:
    """A validated suite, the file it came from and the line of each node (for messages, annotations)."""

    def __init__(self, suite: Suite, path: str, lines: Mapping[Path_, int]) -> None:
        self.suite = suite
        self.path = path
        self.lines = lines

    def line_of(self, path: Path_) -> int | None:
        """The line of the deepest node on `path` that the file has."""
        for cut in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:cut]))
            if line is not None:
                return line
        return None

    def resolved_cases(self) -> list[ResolvedCase]:
        return [self._resolve(i) for i in range(len(self.suite.cases))]

    def _resolve(self, i: int) -> ResolvedCase:
        suite, case = self.suite, self.suite.cases[i]
        provider = self._provider_of(i)
        if case.messages is not None:
            messages = tuple(case.messages)
        else:
            system = [Message(role="system", content=case.system)] if case.system is not None else []
            messages = (*system, Message(role="user", content=case.prompt or ""))
        return ResolvedCase(
            id=case.id,
            line=self.line_of(("cases", i)),
            messages=messages,
            provider=provider,
            thresholds=suite.thresholds.merged(case.thresholds),
            answer=case.answer,
            expected=case.expected,
            samples=case.samples or suite.sampling.samples,
        )

    def _provider_of(self, i: int) -> ProviderConfig:
        """Case i's provider: the suite's merged with the case's, validated by the model of its type."""
        case = self.suite.cases[i]
        data = ProviderConfig.merged(self.suite.provider, case.provider)
        data.setdefault("type", DEFAULT_PROVIDER_TYPE)
        origin = _ProviderOrigin(self.suite.provider, case.provider, i)
        try:
            cls = _provider_class(data["type"])
        except BadInput as exc:
            where = origin.of(("type",))
            raise BadInput(f"{_dotted(where)}: {exc}", path=self.path, line=self.line_of(where)) from exc
        try:
            config = cls.config_model.model_validate(data)
        except ValidationError as exc:
            raise self._provider_error(exc, cls.config_model, origin, case.id, data["type"]) from exc
        return cls.typed_config(config)

    def _provider_error(
        self, exc: ValidationError, model: type[BaseModel], origin: _ProviderOrigin, case_id: str, kind: str
    ) -> BadInput:
        err = exc.errors(include_url=False)[0]
        if err["type"] == "missing":
            key = _dotted(tuple(err["loc"]))
            where = origin.own_provider or ("provider",)
            message = f"case {case_id!r}: provider type {kind!r} needs `{key}`"
            return BadInput(message, path=self.path, line=self.line_of(where))
        return _to_bad_input(exc, self.lines, self.path, root=model, place=origin.of)

    def secret_env_names(self) -> set[str]:
        """Names of the variables whose values are secrets: keys (defaults included) and header ${VAR}s."""
        names: set[str] = set()
        for case in self.resolved_cases():
            names |= _provider_class(case.provider.type).secret_env_names(case.provider)
        return names


def _provider_class(kind: str | None) -> type[Provider]:
    # Imported on use: the providers' modules import suite.model, which imports this package.
    from stabilitygate.providers.registry import provider_class

    return provider_class(kind)


class _ProviderOrigin:
    """Where each key of a case's merged provider mapping was written: the case or the suite."""

    def __init__(self, default: Mapping[str, Any], override: Mapping[str, Any] | None, index: int) -> None:
        self.default = default
        self.override = override or {}
        self.own_provider: Path_ | None = ("cases", index, "provider") if override is not None else None
        self.replaces_default = ProviderConfig.changes_type(default, override)

    def of(self, loc: Path_) -> Path_:
        """The file path of the node at `loc` (a location inside the merged mapping)."""
        if self.own_provider is not None and (self.replaces_default or self._written(self.override, loc)):
            return (*self.own_provider, *loc)
        return ("provider", *loc)

    @staticmethod
    def _written(mapping: Mapping[str, Any], loc: Path_) -> bool:
        """Whether `mapping` sets the key at loc[0] (for params, the param at loc[1])."""
        if not loc or loc[0] not in mapping:
            return False
        if loc[0] == "params" and len(loc) > 1:
            params = mapping.get("params")
            return isinstance(params, Mapping) and loc[1] in params
        return True


def load_suite(path: str | os.PathLike[str]) -> LoadedSuite:
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise BadInput("no such file", path=shown) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read the suite: {exc}", path=shown) from exc
    return parse_suite(text, shown)


def parse_suite(text: str, shown: str) -> LoadedSuite:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
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
    _index_lines(node, (), lines, shown)
    _check_duplicate_ids(data, lines, shown)
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise _to_bad_input(exc, lines, shown) from exc
    loaded = LoadedSuite(suite, shown, lines)
    loaded.resolved_cases()  # provider requirements are checked once everything is merged
    _check_canaries(loaded)
    return loaded


def _check_canaries(loaded: LoadedSuite) -> None:
    """`sampling.canaries` picks among the suite's cases: more than there are is a mistake."""
    canaries, count = loaded.suite.sampling.canaries, len(loaded.suite.cases)
    if canaries > count:
        raise BadInput(
            f"sampling.canaries: {canaries} is more than the suite's {count} cases (expected 0 to {count})",
            path=loaded.path,
            line=loaded.line_of(("sampling", "canaries")),
        )


def check_environment(loaded: LoadedSuite, environ: Mapping[str, str] | None = None) -> None:
    """Run-time checks the file alone cannot decide: the variable of every provider's key is set."""
    env = os.environ if environ is None else environ
    for i, case in enumerate(loaded.resolved_cases()):
        cls = _provider_class(case.provider.type)
        name = cls.key_env(case.provider)
        if name and not env.get(name):
            own = loaded.suite.cases[i].provider
            at = ("cases", i, "provider") if own and ("api_key_env" in own or "type" in own) else ("provider",)
            named = "api_key_env" in (own or {}) or "api_key_env" in loaded.suite.provider
            why = "named by api_key_env" if named else f"holding the {case.provider.type} API key"
            raise BadInput(
                f"case {case.id!r}: the variable {name} {why} is not set",
                path=loaded.path,
                line=loaded.line_of((*at, "api_key_env")),
            )


def _index_lines(node: yaml.Node | None, path: Path_, lines: dict[Path_, int], shown: str) -> None:
    if node is None:
        return
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        keys: set[Any] = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in keys:
                raise BadInput(f"duplicate key {key!r}", path=shown, line=key_node.start_mark.line + 1)
            keys.add(key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            _index_lines(value_node, (*path, key), lines, shown)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _index_lines(item, (*path, i), lines, shown)


def _check_duplicate_ids(data: dict[str, Any], lines: Mapping[Path_, int], shown: str) -> None:
    cases = data.get("cases")
    if not isinstance(cases, list):
        return
    first: dict[Any, int] = {}
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


def _to_bad_input(
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
    where = _dotted(loc)
    if err["type"] == "extra_forbidden" and loc:
        parent = _model_at(inner[:-1], root)
        allowed = ", ".join(sorted(_field_names(parent))) if parent else ""
        message = f"unknown key {loc[-1]!r}" + (f" at {_dotted(loc[:-1])}" if loc[:-1] else "")
        if allowed:
            message += f" (expected one of: {allowed})"
    elif err["type"] == "missing":
        message = f"missing required key {where!r}"
    else:
        got = err.get("input")
        shown_input = "" if isinstance(got, dict | list) else f", got {got!r}"
        msg = str(err["msg"]).removeprefix("Value error, ")
        message = f"{where}: {msg}{shown_input}" if where else msg
    line = None
    for cut in range(len(loc), -1, -1):
        line = lines.get(tuple(loc[:cut]))
        if line is not None:
            break
    return BadInput(message, path=shown, line=line)


def _dotted(loc: Path_) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(loc: Path_, root: type[BaseModel] = Suite) -> type[BaseModel] | None:
    """The pydantic model that describes the node at `loc` (for listing the keys it accepts)."""
    model: type[BaseModel] | None = root
    for part in loc:
        if model is None:
            return None
        if isinstance(part, int):
            continue
        field = _fields_by_alias(model).get(part)
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model


def _fields_by_alias(model: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or name): f for name, f in model.model_fields.items()}


def _field_names(model: type[BaseModel]) -> list[str]:
    return list(_fields_by_alias(model))


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
