"""Resolving a suite's cases against the provider types: the layer above `suite/` and `providers/`.

`suite/` reads the file and knows no provider; `providers/` knows the types and their config
models. Here each case's provider mapping (the suite's merged with the case's) is validated by the
model of its type, with errors pointing at the line that wrote the key; here too are the run-time
checks of the environment and the names of the variables that hold secrets (docs/design.md §4, §12).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ValidationError

from stabilitygate.equivalence import (
    MissingKey,
    entailment_secret_env_names,
    missing_entailment_keys,
    resolve_entailment_judge,
)
from stabilitygate.errors import BadInput
from stabilitygate.providers.interface import Request
from stabilitygate.providers.registry import provider_class
from stabilitygate.suite.load import (
    LoadedSuite,
    ParsedSuite,
    Path_,
    dotted,
    parse_suite_file,
    read_suite_text,
    to_bad_input,
)
from stabilitygate.suite.model import DEFAULT_PROVIDER_TYPE, Message, ProviderConfig, ResolvedCase
from stabilitygate.suite.variants import idempotency_thresholds
from stabilitygate.variant_cases import resolve_variants

__all__ = ["check_environment", "environment_problems", "load_suite", "resolve", "secret_env_names"]


def load_suite(path: str | os.PathLike[str]) -> LoadedSuite:
    """The suite at `path`, every case resolved; BadInput (one line, file and line) for any problem."""
    shown = str(path)
    return resolve(parse_suite_file(read_suite_text(path), shown))


def resolve(parsed: ParsedSuite) -> LoadedSuite:
    """Every case with the suite's defaults applied and its provider validated by its type's model."""
    cases = tuple(_resolve_case(parsed, i) for i in range(len(parsed.suite.cases)))
    return LoadedSuite(parsed.suite, parsed.path, parsed.lines, cases, resolve_variants(parsed, cases))


def secret_env_names(cases: Iterable[ResolvedCase]) -> frozenset[str]:
    """Names of the variables whose values are secrets: keys (defaults included) and header ${VAR}s."""
    names: set[str] = set()
    for case in cases:
        names |= provider_class(case.provider.type).secret_env_names(case.provider)
        names |= entailment_secret_env_names((case,))
    return frozenset(names)


def check_environment(loaded: LoadedSuite, environ: Mapping[str, str] | None = None) -> None:
    """Run-time checks the file alone cannot decide: the variable of every provider's key is set."""
    problems = environment_problems(loaded, environ)
    if problems:
        raise problems[0]


def environment_problems(loaded: LoadedSuite, environ: Mapping[str, str] | None = None) -> list[BadInput]:
    """Every key variable a provider or a judge of the suite reads and the environment lacks, once per
    line that names it, in order (`validate` warns of each; `run` stops at the first)."""
    env = os.environ if environ is None else environ
    problems, said = [], set()
    for missing in [*_missing_provider_keys(loaded, env), *missing_entailment_keys(loaded, env)]:
        if (missing.name, missing.line) not in said:  # one line for the cases that share a provider
            said.add((missing.name, missing.line))
            problems.append(missing.problem(loaded.path))
    return problems


def _missing_provider_keys(loaded: LoadedSuite, environ: Mapping[str, str]) -> list[MissingKey]:
    missing = []
    for i, case in enumerate(loaded.cases):
        name = provider_class(case.provider.type).key_env(case.provider)
        if name and not environ.get(name):
            own = loaded.suite.cases[i].provider
            at = ("cases", i, "provider") if own and ("api_key_env" in own or "type" in own) else ("provider",)
            named = "api_key_env" in (own or {}) or "api_key_env" in loaded.suite.provider
            why = "named by api_key_env" if named else f"holding the {case.provider.type} API key"
            missing.append(MissingKey(case.id, name, why, loaded.line_of((*at, "api_key_env"))))
    return missing


def _resolve_case(parsed: ParsedSuite, i: int) -> ResolvedCase:
    resolved = _resolved(parsed, i)
    _check_first_request(parsed, i, resolved)
    return resolved


def _check_first_request(parsed: ParsedSuite, i: int, case: ResolvedCase) -> None:
    """What the provider would find wrong with the case's first request (a body template that does not
    render): exit 2 now, at the line that wrote the key, rather than a failure of every sample."""
    kind = provider_class(case.provider.type)
    request = Request.of_case(case, 0)
    problem = kind.check_request(case.provider, request, timeout_s=parsed.suite.sampling.timeout_s)
    if problem is not None:
        origin = _ProviderOrigin(parsed.suite.provider, parsed.suite.cases[i].provider, i)
        key = problem.split(":", 1)[0].removeprefix("provider.")  # the key the problem names, e.g. body
        where = origin.of((key,))
        raise BadInput(f"case {case.id!r}: {problem}", path=parsed.path, line=parsed.line_of(where))


def _resolved(parsed: ParsedSuite, i: int) -> ResolvedCase:
    suite, case = parsed.suite, parsed.suite.cases[i]
    if case.messages is not None:
        messages = tuple(case.messages)
    else:
        system = [Message(role="system", content=case.system)] if case.system is not None else []
        messages = (*system, Message(role="user", content=case.prompt or ""))
    idempotency = case.idempotency or suite.sampling.idempotency
    return ResolvedCase(
        id=case.id,
        line=parsed.line_of(("cases", i)),
        messages=messages,
        provider=_provider_of(parsed, i),
        thresholds=idempotency_thresholds(suite.thresholds.merged(case.thresholds), idempotency),
        answer=case.answer,
        expected=case.expected,
        samples=case.samples or suite.sampling.samples,
        baseline_samples=case.baseline_samples or suite.sampling.baseline_samples,
        max_samples=case.max_samples or suite.sampling.max_samples,
        entailment_judge=resolve_entailment_judge(parsed, i),
        idempotency=idempotency,
    )


def _provider_of(parsed: ParsedSuite, i: int) -> ProviderConfig:
    """Case i's provider: the suite's merged with the case's, validated by the model of its type."""
    case = parsed.suite.cases[i]
    data = ProviderConfig.merged(parsed.suite.provider, case.provider)
    data.setdefault("type", DEFAULT_PROVIDER_TYPE)
    origin = _ProviderOrigin(parsed.suite.provider, case.provider, i)
    try:
        cls = provider_class(data["type"])
    except BadInput as exc:
        where = origin.of(("type",))
        raise BadInput(f"{dotted(where)}: {exc}", path=parsed.path, line=parsed.line_of(where)) from exc
    try:
        config = cls.config_model.model_validate(data)
    except ValidationError as exc:
        raise _provider_error(parsed, exc, cls.config_model, origin, case.id, data["type"]) from exc
    return cls.typed_config(config)


def _provider_error(
    parsed: ParsedSuite,
    exc: ValidationError,
    model: type[BaseModel],
    origin: _ProviderOrigin,
    case_id: str,
    kind: object,
) -> BadInput:
    err = exc.errors(include_url=False)[0]
    if err["type"] == "missing":
        key = dotted(tuple(err["loc"]))
        where = origin.own_provider or ("provider",)
        message = f"case {case_id!r}: provider type {kind!r} needs `{key}`"
        return BadInput(message, path=parsed.path, line=parsed.line_of(where))
    return to_bad_input(exc, parsed.lines, parsed.path, root=model, place=origin.of)


class _ProviderOrigin:
    """Where each key of a case's merged provider mapping was written: the case or the suite."""

    def __init__(self, default: Mapping[str, object], override: Mapping[str, object] | None, index: int) -> None:
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
    def _written(mapping: Mapping[str, object], loc: Path_) -> bool:
        """Whether `mapping` sets the key at loc[0] (for params, the param at loc[1])."""
        if not loc or loc[0] not in mapping:
            return False
        if loc[0] == "params" and len(loc) > 1:
            params = mapping.get("params")
            return isinstance(params, Mapping) and loc[1] in params
        return True
