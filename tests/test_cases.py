"""Resolving a suite's cases against the provider types (`stabilitygate.cases`): each type validates
its own keys, merged from the suite's default and the case, errors at the line that wrote them."""

from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.cases import check_environment, load_suite, secret_env_names
from stabilitygate.errors import BadInput
from stabilitygate.suite.load import LoadedSuite, parse_suite_file
from tests.suite.test_load import GOOD, write
from tests.support.suites import parse_suite


def test_the_suite_package_alone_leaves_providers_unresolved() -> None:
    text = GOOD.replace("  api_key_env: DEMO_KEY\n", "  api_key_env: DEMO_KEY\n  command: [echo]\n")
    parsed = parse_suite_file(text, "s.yml")  # the file is fine; the key is wrong only for type openai
    assert not isinstance(parsed, LoadedSuite)
    with pytest.raises(BadInput, match="unknown key 'command'"):
        parse_suite(text, "s.yml")


def test_secret_names_are_every_key_variable_defaults_included() -> None:
    loaded = parse_suite(GOOD, "s.yml")
    assert secret_env_names(loaded.cases) == {"DEMO_KEY", "OPENAI_API_KEY"}
    assert secret_env_names([]) == frozenset()


def test_unset_api_key_variable_is_bad_input_at_run_time(tmp_path: Path) -> None:
    loaded = load_suite(write(tmp_path, GOOD))
    with pytest.raises(BadInput, match=r"suite.yml:6: .*DEMO_KEY.* not set"):
        check_environment(loaded, {})
    check_environment(loaded, {"DEMO_KEY": "sk-x"})


def test_a_key_the_type_does_not_take_names_its_line_and_the_keys_it_accepts() -> None:
    text = GOOD.replace("  api_key_env: DEMO_KEY\n", "  api_key_env: DEMO_KEY\n  command: [echo]\n")
    with pytest.raises(BadInput) as info:
        parse_suite(text, "s.yml")
    message = str(info.value)
    assert message.startswith("s.yml:7: unknown key 'command' at provider"), message
    assert "(expected one of: api_key_env, base_url, headers, model, params, type)" in message


def test_a_case_override_error_points_at_the_case() -> None:
    text = GOOD.replace("provider: {params: {seed: 8}}", "provider: {params: {seed: 8}, url: http://x}")
    with pytest.raises(BadInput, match=r"^s\.yml:20: unknown key 'url' at cases\[1\]\.provider"):
        parse_suite(text, "s.yml")


def test_a_bad_param_points_at_whichever_mapping_wrote_it() -> None:
    own = GOOD.replace("provider: {params: {seed: 8}}", "provider: {params: {seed: 2026-01-01}}")
    with pytest.raises(BadInput, match=r"^s\.yml:20: cases\[1\]\.provider\.params: params must be plain JSON"):
        parse_suite(own, "s.yml")
    inherited = GOOD.replace("{temperature: 0, seed: 7}", "{temperature: 0, when: 2026-01-01}")
    with pytest.raises(BadInput, match=r"^s\.yml:7: provider\.params: params must be plain JSON"):
        parse_suite(inherited, "s.yml")


def test_a_case_of_another_type_shares_nothing_with_the_default() -> None:
    text = GOOD.replace("provider: {params: {seed: 8}}", "provider: {type: command, command: [cat], params: {seed: 8}}")
    borough, letter = parse_suite(text, "s.yml").resolved_cases()
    assert (borough.provider.type, letter.provider.type) == ("openai", "command")
    assert letter.provider.params == {"seed": 8} and letter.provider.model is None
    assert not hasattr(letter.provider, "base_url")
    missing = GOOD.replace("provider: {params: {seed: 8}}", "provider: {type: http}")
    with pytest.raises(BadInput, match=r"^s\.yml:20: case 'letter': provider type 'http' needs `url`"):
        parse_suite(missing, "s.yml")


def test_the_default_type_is_openai_with_its_default_base_url() -> None:
    text = GOOD.replace("  type: openai\n", "")
    borough = parse_suite(text, "s.yml").resolved_cases()[0]
    assert type(borough.provider).__name__ == "OpenAIConfig"
    assert borough.provider.type == "openai" and borough.provider.base_url == "https://api.openai.com/v1"


def test_anthropic_needs_its_default_key_variable_at_run_time() -> None:
    text = GOOD.replace("type: openai", "type: anthropic").replace("  api_key_env: DEMO_KEY\n", "")
    loaded = parse_suite(text, "s.yml")
    assert secret_env_names(loaded.cases) == {"ANTHROPIC_API_KEY"}
    with pytest.raises(BadInput, match=r"^s\.yml:3: case 'borough': the variable ANTHROPIC_API_KEY holding"):
        check_environment(loaded, {})
    check_environment(loaded, {"ANTHROPIC_API_KEY": "sk-ant-x"})


@pytest.mark.parametrize(
    ("provider", "case_provider", "message"),
    [
        ("{type: [a]}", "", "s.yml:3: provider.type: unknown provider type ['a']"),
        ("{model: m}", ", provider: {type: {x: 1}}", "s.yml:5: cases[0].provider.type: unknown provider type"),
        ("{model: m, params: {a: 1}}", ", provider: {params: 3}", "s.yml:5: cases[0].provider.params: Input should"),
        ("{type: command, command: []}", "", "s.yml:3: provider.command: expected a program to run"),
    ],
)
def test_odd_provider_values_are_one_line_errors(provider: str, case_provider: str, message: str) -> None:
    text = f"version: 1\nname: s\nprovider: {provider}\ncases:\n  - {{id: a, prompt: hi{case_provider}}}\n"
    with pytest.raises(BadInput) as info:
        parse_suite(text, "s.yml")
    assert str(info.value).startswith(message)


def test_a_null_provider_key_counts_as_unset() -> None:
    text = "version: 1\nname: s\nprovider: {type: null, model: m, params: {a: 1}}\ncases:\n"
    text += "  - {id: a, prompt: hi, provider: {model: null, params: {b: 2}}}\n"
    (case,) = parse_suite(text, "s.yml").resolved_cases()
    assert (case.provider.type, case.provider.model, case.provider.params) == ("openai", "m", {"a": 1, "b": 2})
