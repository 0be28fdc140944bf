"""Resolving `equivalence: {judge: PROVIDER}`: the entailment judge of each case (docs/design.md §4, §5).

A case's own `equivalence` replaces the suite's. The judge block is validated by the config model of
its provider type, exactly as `provider:` is, with errors at the line that wrote the key; its key
variable must be set at run time and its values are secrets like any provider's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from stabilitygate.errors import BadInput
from stabilitygate.providers.registry import provider_class
from stabilitygate.suite.load import LoadedSuite, ParsedSuite, Path_, dotted, to_bad_input
from stabilitygate.suite.model import DEFAULT_PROVIDER_TYPE, ProviderConfig, ResolvedCase


def entailment_block(parsed: ParsedSuite, i: int) -> tuple[Mapping[str, object], Path_] | None:
    """Case i's judge mapping and where the file wrote it; None without `equivalence`."""
    own = parsed.suite.cases[i].equivalence
    if own is not None:
        return own.judge, ("cases", i, "equivalence", "judge")
    if parsed.suite.equivalence is not None:
        return parsed.suite.equivalence.judge, ("equivalence", "judge")
    return None


def resolve_entailment_judge(parsed: ParsedSuite, i: int) -> ProviderConfig | None:
    """Case i's judge, validated by the config model of its type; BadInput at the offending line."""
    block = entailment_block(parsed, i)
    if block is None:
        return None
    mapping, at = block
    data = {key: value for key, value in mapping.items() if value is not None}
    data.setdefault("type", DEFAULT_PROVIDER_TYPE)
    try:
        cls = provider_class(data["type"])
    except BadInput as exc:
        where = (*at, "type")
        raise BadInput(f"{dotted(where)}: {exc}", path=parsed.path, line=parsed.line_of(where)) from exc
    try:
        config = cls.config_model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        if err["type"] == "missing":
            message = f"{dotted(at)}: provider type {data['type']!r} needs `{dotted(tuple(err['loc']))}`"
            raise BadInput(message, path=parsed.path, line=parsed.line_of(at)) from exc
        raise to_bad_input(
            exc, parsed.lines, parsed.path, root=cls.config_model, place=lambda loc: (*at, *loc)
        ) from exc
    return cls.typed_config(config)


def entailment_secret_env_names(cases: Iterable[ResolvedCase]) -> frozenset[str]:
    """The variables whose values the judges may send or see: keys and header ${VAR}s."""
    names: set[str] = set()
    for case in cases:
        if case.entailment_judge is not None:
            names |= provider_class(case.entailment_judge.type).secret_env_names(case.entailment_judge)
    return frozenset(names)


@dataclass(frozen=True)
class MissingKey:
    """A key variable a case's provider or judge reads and the environment lacks, and where it is named."""

    case_id: str
    name: str  # the variable
    why: str  # "named by api_key_env", "holding the entailment judge's API key", ...
    line: int | None

    def problem(self, path: str) -> BadInput:
        return BadInput(
            f"case {self.case_id!r}: the variable {self.name} {self.why} is not set", path=path, line=self.line
        )


def missing_entailment_keys(loaded: LoadedSuite, environ: Mapping[str, str]) -> list[MissingKey]:
    """Each judge's key variable that the environment lacks, at the judge block that names it."""
    missing = []
    for i, case in enumerate(loaded.cases):
        if case.entailment_judge is None:
            continue
        name = provider_class(case.entailment_judge.type).key_env(case.entailment_judge)
        if name and not environ.get(name):
            own = loaded.suite.cases[i].equivalence is not None
            at: Path_ = ("cases", i, "equivalence", "judge") if own else ("equivalence", "judge")
            why = "holding the entailment judge's API key"
            missing.append(MissingKey(case.id, name, why, loaded.line_of((*at, "api_key_env"))))
    return missing
