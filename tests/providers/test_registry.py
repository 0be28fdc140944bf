"""The provider registry: built-ins by name, plugins through a real entry point of an installed distribution."""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from stabilitygate.cases import secret_env_names
from stabilitygate.errors import BadInput
from stabilitygate.pipeline.meanings import case_entailment_key
from stabilitygate.providers.interface import Request
from stabilitygate.providers.registry import (
    BUILT_IN,
    ENTRY_POINT_GROUP,
    config_union,
    fingerprint_note,
    make_provider,
    provider_class,
    provider_types,
)
from stabilitygate.secrets import collect_secrets
from tests.support.suites import parse_suite

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = '''\
"""A third-party provider: it answers with the prompt reversed."""

from collections.abc import Mapping
from typing import Literal

from stabilitygate import Completion, KeyedConfig, Provider, Request  # the package's own names only


class EchoConfig(KeyedConfig):
    type: Literal["echo"]
    reverse: bool = True


class EchoProvider(Provider):
    config_model = EchoConfig
    has_fingerprint = False
    default_key_env = "ECHO_API_KEY"

    def __init__(self, config: EchoConfig, *, environ: Mapping[str, str], timeout_s: float) -> None:
        self.config = config

    async def complete(self, request: Request) -> Completion:
        text = request.messages[-1]["content"]
        return Completion(text=text[::-1] if self.config.reverse else text)


class Mislabelled(EchoProvider):
    pass
'''

SUITE = """\
version: 1
name: plugin
provider:
  type: echo
  reverse: true
cases:
  - {id: a, prompt: abc}
  - {id: b, prompt: abc, provider: {reverse: false, api_key_env: MY_ECHO_KEY}}
"""


def install_plugin(site: Path, entry_points: str) -> None:
    """An installed distribution as pip leaves it: the module and a dist-info with entry_points.txt."""
    (site / "echo_plugin.py").write_text(PLUGIN)
    info = site / "echo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{textwrap.dedent(entry_points)}")


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    install_plugin(tmp_path, "echo = echo_plugin:EchoProvider\nwrong = echo_plugin:Mislabelled\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    sys.modules.pop("echo_plugin", None)


def test_built_ins_come_first_and_unknown_types_list_every_type(plugin: Path) -> None:
    assert provider_types() == [*BUILT_IN, "echo", "wrong"]
    with pytest.raises(BadInput, match=r"unknown provider type 'bard' \(expected one of: openai, .*, echo, wrong\)"):
        provider_class("bard")


def test_a_plugin_validates_merges_and_samples_like_a_built_in(plugin: Path) -> None:
    first, second = parse_suite(SUITE, "s.yml").resolved_cases()
    assert type(first.provider).__name__ == "EchoConfig"
    assert second.provider.type == "echo" and second.provider.model_dump()["reverse"] is False
    provider = make_provider(first.provider, environ={})
    request = Request("a", 0, ({"role": "user", "content": "abc"},), None, {}, "k")
    assert asyncio.run(provider.complete(request)).text == "cba"
    assert fingerprint_note("echo") is not None
    secrets = collect_secrets(
        secret_env_names([first, second]), {"ECHO_API_KEY": "echo-default-key", "MY_ECHO_KEY": "mine-12345678"}
    )
    assert secrets.values == {"echo-default-key", "mine-12345678"}


def test_a_key_the_plugin_does_not_take_is_bad_input_with_its_keys(plugin: Path) -> None:
    with pytest.raises(BadInput) as info:
        parse_suite(SUITE.replace("  reverse: true\n", "  reverse: true\n  url: http://x\n"), "s.yml")
    assert str(info.value).startswith("s.yml:6: unknown key 'url' at provider")
    assert "(expected one of: api_key_env, model, params, reverse, type)" in str(info.value)


def test_a_plugin_whose_config_is_not_tagged_with_its_name_is_refused(plugin: Path) -> None:
    with pytest.raises(BadInput, match=r"provider type 'wrong': entry point wrong = echo_plugin:Mislabelled"):
        provider_class("wrong")


def test_a_plugin_joins_the_discriminated_union(plugin: Path) -> None:
    union = config_union(["openai", "echo"])
    assert type(union.validate_python({"type": "echo"})).__name__ == "EchoConfig"
    assert type(union.validate_python({"type": "openai", "model": "m"})).__name__ == "OpenAIConfig"


def test_validate_accepts_a_plugin_type_only_once_it_is_installed(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text(SUITE)
    site = tmp_path / "site"
    site.mkdir()
    command = [sys.executable, "-m", "stabilitygate", "validate", str(suite)]
    missing = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "unknown provider type 'echo'" in missing.stderr
    assert f"{suite}:4:" in missing.stderr
    install_plugin(site, "echo = echo_plugin:EchoProvider\n")
    env = {"PYTHONPATH": f"{site}:{ROOT}", "PATH": "/usr/bin:/bin"}
    installed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    assert installed.returncode == 0, installed.stderr


def test_a_plugins_own_keys_enter_the_definition_hash_and_the_judgment_key(plugin: Path) -> None:
    suite = (
        "version: 1\nname: plugin\nprovider: {type: echo}\nequivalence: {judge: {type: echo}}\ncases:\n"
        "  - {id: default, prompt: abc}\n"
        "  - {id: keyed, prompt: abc, provider: {api_key_env: MY_ECHO_KEY}}\n"
        "  - id: forward\n    prompt: abc\n    provider: {reverse: false}\n"
        "    equivalence: {judge: {type: echo, reverse: false}}\n"
    )
    default, keyed, forward = parse_suite(suite, "s.yml").resolved_cases()
    assert default.provider.identity()["reverse"] is True  # a plugin's default is part of what it does
    assert forward.definition_hash != default.definition_hash  # the plugin's key decides its answers
    assert keyed.definition_hash == default.definition_hash  # the variable holding its key does not
    assert case_entailment_key(forward) != case_entailment_key(default) == case_entailment_key(keyed)
