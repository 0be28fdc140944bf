"""Each case's variants resolved into cases of their own: the layer above `suite/` and `providers/`.

A variant of a case is the case with some of its parts replaced (docs/design.md §16, "Remedies"):
`provider` merged over the case's provider as a case's is merged over the suite's, `params` merged
into its params key by key, `system` and `prompt` replacing those messages, `messages` all of them,
`answer` the parser, `idempotency` the keying of its samples. The result is validated by the config
model of its provider's type, so a key the type does not take is exit 2 at the variant's line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from pydantic import ValidationError

from stabilitygate.errors import BadInput
from stabilitygate.providers.interface import Request
from stabilitygate.providers.registry import provider_class
from stabilitygate.suite.expected import check_expected
from stabilitygate.suite.load import ParsedSuite, Path_, dotted, to_bad_input
from stabilitygate.suite.model import DEFAULT_PROVIDER_TYPE, Message, ProviderConfig, ResolvedCase, Variant
from stabilitygate.suite.variants import ResolvedVariant, idempotency_thresholds, variant_case_id, variants_of

#: The order a variant's overrides are named in.
OVERRIDE_ORDER = ("provider", "params", "system", "prompt", "messages", "answer", "idempotency")
#: The overrides that act only through what is sent: a variant of these alone must change the request.
SENT_OVERRIDES = frozenset({"provider", "params", "system", "prompt", "messages"})


def resolve_variants(parsed: ParsedSuite, cases: Sequence[ResolvedCase]) -> dict[str, tuple[ResolvedVariant, ...]]:
    """Every case's variants, by case id (cases without any are left out)."""
    resolved: dict[str, tuple[ResolvedVariant, ...]] = {}
    for i, (written, case) in enumerate(zip(parsed.suite.cases, cases, strict=True)):
        own = written.variants or {}
        found = []
        for name, variant in variants_of(parsed.suite, written).items():
            where: Path_ = ("cases", i, "variants", name) if name in own else ("variants", name)
            found.append(_resolve_one(parsed, i, case, name, variant, where))
        if found:
            resolved[case.id] = tuple(found)
    return resolved


def _resolve_one(
    parsed: ParsedSuite, i: int, case: ResolvedCase, name: str, variant: Variant, where: Path_
) -> ResolvedVariant:
    answer = variant.answer if variant.answer is not None else case.answer
    if variant.answer is not None:
        try:
            check_expected(answer.kind if answer is not None else None, case.expected)
        except ValueError as exc:
            raise BadInput(
                f"{dotted(where)}.answer: the case's `expected` does not fit this parser: {exc}",
                path=parsed.path,
                line=parsed.line_of((*where, "answer")),
            ) from exc
    idempotency = variant.idempotency or case.idempotency
    as_case = case.model_copy(
        update={
            "id": variant_case_id(case.id, name),
            "line": parsed.line_of(where),
            "messages": _messages(case.messages, variant),
            "provider": _provider(parsed, i, variant, where),
            "answer": answer,
            "idempotency": idempotency,
            "thresholds": idempotency_thresholds(case.thresholds, idempotency),
        }
    )
    overrides = tuple(key for key in OVERRIDE_ORDER if key in variant.overrides)
    if set(overrides) <= SENT_OVERRIDES:
        _check_sends_otherwise(parsed, case, as_case, overrides, where)
    return ResolvedVariant(name, case.id, as_case, overrides, parsed.line_of(where))


def _check_sends_otherwise(
    parsed: ParsedSuite, case: ResolvedCase, variant: ResolvedCase, overrides: Sequence[str], where: Path_
) -> None:
    """A variant that overrides only what is sent must change what is sent: else it would be measured, and
    reported better or worse, for noise alone (params on an http body that sends none, say)."""
    timeout_s = parsed.suite.sampling.timeout_s
    own = Request.of_case(case, 0)
    theirs = replace(Request.of_case(variant, 0), case_id=own.case_id, idempotency_key=own.idempotency_key)
    kind = provider_class(variant.provider.type)
    sent = kind.sent(variant.provider, theirs, timeout_s=timeout_s)
    if sent is None or provider_class(case.provider.type) is not kind:
        return
    if sent == kind.sent(case.provider, own, timeout_s=timeout_s):
        raise BadInput(
            f"{dotted(where)}: overrides {', '.join(overrides)}, but case {case.id!r}'s first request would be "
            f"sent unchanged: its {variant.provider.type} provider sends {kind.sends}; expected an override that "
            "changes what is sent",
            path=parsed.path,
            line=parsed.line_of(where),
        )


def _messages(messages: tuple[Message, ...], variant: Variant) -> tuple[Message, ...]:
    """The case's messages with the variant's replacing them: all, the system message, the last user one."""
    if variant.messages is not None:
        return tuple(variant.messages)
    out = list(messages)
    if variant.system is not None:
        system = Message(role="system", content=variant.system)
        out = [system, *out[1:]] if out and out[0].role == "system" else [system, *out]
    if variant.prompt is not None:
        last_user = max((j for j, m in enumerate(out) if m.role == "user"), default=None)
        prompt = Message(role="user", content=variant.prompt)
        if last_user is None:
            out.append(prompt)
        else:
            out[last_user] = prompt
    return tuple(out)


def _provider(parsed: ParsedSuite, i: int, variant: Variant, where: Path_) -> ProviderConfig:
    """The case's provider mapping with the variant's merged over it, validated by its type's model."""
    case_mapping = ProviderConfig.merged(parsed.suite.provider, parsed.suite.cases[i].provider)
    case_mapping.setdefault("type", DEFAULT_PROVIDER_TYPE)
    data = ProviderConfig.merged(case_mapping, _variant_mapping(variant))
    data.setdefault("type", case_mapping["type"])
    try:
        cls = provider_class(data["type"])
    except BadInput as exc:
        at = (*where, "provider", "type")
        raise BadInput(f"{dotted(at)}: {exc}", path=parsed.path, line=parsed.line_of(at)) from exc
    try:
        config = cls.config_model.model_validate(data)
    except ValidationError as exc:
        raise to_bad_input(
            exc, parsed.lines, parsed.path, root=cls.config_model, place=lambda loc: (*where, "provider", *loc)
        ) from exc
    return cls.typed_config(config)


def _variant_mapping(variant: Variant) -> Mapping[str, object] | None:
    """The variant's provider override, its `params` shorthand merged in."""
    if variant.params is None:
        return variant.provider
    own = dict(variant.provider or {})
    inner = own.get("params")
    own["params"] = {**(inner if isinstance(inner, Mapping) else {}), **variant.params}
    return own
