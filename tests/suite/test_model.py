"""A provider's identity (`ProviderConfig.identity`): what decides its answers enters the definition
hash and the judgment key; where it is, and what it may read, do not (docs/design.md §4). The suite's
names as types: each threshold and each parser is one Literal the rest of the gate uses."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from stabilitygate.pipeline.meanings import case_entailment_key
from stabilitygate.suite.model import PARSER_KINDS, AnswerSpec, ResolvedCase, ThresholdName, Thresholds
from tests.support.suites import parse_suite

Provider = dict[str, Any]
HTTP: Provider = {"type": "http", "url": "http://127.0.0.1:9/answer", "completion_pointer": "/answer"}
COMMAND: Provider = {"type": "command", "command": ["python", "app.py"]}


def case_with(provider: Provider) -> ResolvedCase:
    """The one case of a suite whose provider is `provider` (JSON is YAML)."""
    text = f"version: 1\nname: s\nprovider: {json.dumps(provider)}\ncases: [{{id: a, prompt: hi}}]\n"
    (case,) = parse_suite(text, "s.yml").resolved_cases()
    return case


def judge_key_with(judge: Provider) -> str:
    """The judgment key of a case whose entailment judge is `judge`."""
    text = (
        f"version: 1\nname: s\nprovider: {{model: m}}\nequivalence: {{judge: {json.dumps(judge)}}}\n"
        "cases: [{id: a, prompt: hi}]\n"
    )
    (case,) = parse_suite(text, "s.yml").resolved_cases()
    return case_entailment_key(case)


@pytest.mark.parametrize(
    ("provider", "behaviour"),
    [
        (HTTP, {"method": "GET"}),
        (HTTP, {"method": "PUT"}),
        (COMMAND, {"input": "json"}),
        (COMMAND, {"shell": True, "command": "python app.py"}),
        (COMMAND, {"shell": True}),
    ],
)
def test_a_key_that_changes_what_the_provider_does_changes_the_hash(provider: Provider, behaviour: Provider) -> None:
    changed = {**provider, **behaviour}
    assert case_with(changed).definition_hash != case_with(provider).definition_hash
    assert judge_key_with(changed) != judge_key_with(provider)


@pytest.mark.parametrize(
    ("provider", "same"),
    [
        (HTTP, {"method": "POST"}),  # what an unset method sends
        (HTTP, {"url": "http://ci-host:8080/answer"}),
        (HTTP, {"headers": {"X-Team": "${TEAM}"}, "api_key_env": "APP_KEY"}),
        (COMMAND, {"input": "stdin"}),  # what an unset input hands over
        (COMMAND, {"shell": False}),
        (COMMAND, {"pass_env": ["INPUT_SUITE"], "api_key_env": "APP_KEY"}),
        ({"type": "openai", "model": "m"}, {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "K", "headers": {}}),
        ({"type": "anthropic", "model": "m"}, {"base_url": "http://127.0.0.1:9"}),
    ],
)
def test_the_address_and_values_the_provider_implies_leave_the_hash_alone(provider: Provider, same: Provider) -> None:
    written = {**provider, **same}
    assert case_with(written).definition_hash == case_with(provider).definition_hash
    assert judge_key_with(written) == judge_key_with(provider)


def test_the_identity_names_the_keys_that_decide_and_none_of_the_address() -> None:
    case = case_with({**HTTP, "method": "GET", "body": "{}", "headers": {"X": "y"}, "params": {"temperature": 0}})
    assert case.provider.identity() == {
        "type": "http",
        "model": None,
        "params": {"temperature": 0},
        "body": "{}",
        "command": None,
        "completion_pointer": "/answer",
        "method": "GET",
    }
    assert case.provider.endpoint() == "http://127.0.0.1:9/answer"
    assert case_with(COMMAND).provider.endpoint() is None


def test_the_threshold_names_are_the_keys_of_thresholds() -> None:
    assert list(get_args(ThresholdName)) == list(Thresholds.model_fields)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ({"json": "/a"}, "json"),
        ({"choice": ["A", "B"]}, "choice"),
        ({"regex": "(x)"}, "regex"),
        ({"number": True}, "number"),
        ({"text": {}}, "text"),
    ],
)
def test_each_parser_names_its_kind(answer: dict[str, object], kind: str) -> None:
    assert AnswerSpec.model_validate(answer).kind == kind


def test_the_parser_kinds_are_the_parser_keys_of_an_answer() -> None:
    keys = {field.alias or name for name, field in AnswerSpec.model_fields.items()} - {"schema"}
    assert set(PARSER_KINDS) == keys
