"""Suite loading: every rule of docs/design.md §4, "The suite file", each error one line with the file and the line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stabilitygate.cases import load_suite, secret_env_names
from stabilitygate.errors import BadInput
from tests.support.suites import parse_suite

GOOD = """\
version: 1
name: demo
provider:
  type: openai
  model: gpt-4o-mini
  api_key_env: DEMO_KEY
  params: {temperature: 0, seed: 7}
sampling: {samples: 10}
thresholds: {max_unique: 3}
cases:
  - id: borough
    system: You answer in JSON.
    prompt: 'Where? Reply {"borough": ...}'
    answer: {json: /borough}
    expected: Queens
    thresholds: {max_unique: 1}
  - id: letter
    messages: [{role: user, content: "Q: A or B?"}]
    answer: {choice: [A, B]}
    provider: {params: {seed: 8}}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent(text))
    return path


def test_good_suite_resolves_defaults_and_overrides(tmp_path: Path) -> None:
    loaded = load_suite(write(tmp_path, GOOD))
    borough, letter = loaded.resolved_cases()
    assert borough.thresholds.max_unique == 1 and letter.thresholds.max_unique == 3
    assert [m.role for m in borough.messages] == ["system", "user"]
    assert borough.provider.base_url == "https://api.openai.com/v1"
    assert letter.provider.params == {"temperature": 0, "seed": 8}
    assert borough.line == 11 and letter.line == 17
    assert borough.samples == 10
    assert secret_env_names(loaded.cases) == {"DEMO_KEY", "OPENAI_API_KEY"}  # the default key is a secret too


def test_a_number_answer_takes_true_or_its_options(tmp_path: Path) -> None:
    for written, decimal_comma in (("true", False), ("{decimal_comma: true}", True), ("{}", False)):
        loaded = load_suite(write(tmp_path, GOOD.replace("{choice: [A, B]}", f"{{number: {written}}}")))
        answer = loaded.resolved_cases()[1].answer
        assert answer is not None and answer.kind == "number" and answer.decimal_comma is decimal_comma


def test_definition_hash_changes_with_prompt_not_thresholds(tmp_path: Path) -> None:
    base = load_suite(write(tmp_path, GOOD)).resolved_cases()[0].definition_hash
    looser = load_suite(write(tmp_path, GOOD.replace("{max_unique: 1}", "{max_unique: 2}")))
    edited = load_suite(write(tmp_path, GOOD.replace("Where?", "Where exactly?")))
    assert looser.resolved_cases()[0].definition_hash == base
    assert edited.resolved_cases()[0].definition_hash != base


BAD = {
    "bad_yaml": (GOOD.replace("name: demo", "name: [demo"), 3, "parsing a flow sequence started at line 2"),
    "unknown_key": (GOOD.replace("  - id: letter", "  - id: letter\n    promt: typo"), 18, "unknown key 'promt'"),
    "wrong_type": (GOOD.replace("{samples: 10}", "{samples: many}"), 8, "sampling.samples"),
    "missing_prompt": (GOOD.replace("    prompt: 'Where? Reply {\"borough\": ...}'\n", ""), 11, "prompt"),
    "duplicate_id": (GOOD.replace("id: letter", "id: borough"), 17, "duplicate case id 'borough'"),
    "samples_1": (GOOD.replace("{samples: 10}", "{samples: 1}"), 8, "greater than or equal to 2"),
    "threshold_1_5": (GOOD.replace("{max_unique: 3}", "{min_agreement: 1.5}"), 9, "less than or equal to 1"),
    "unknown_provider": (GOOD.replace("type: openai", "type: bard"), 4, "provider.type"),
    "empty_cases": (GOOD.split("cases:")[0] + "cases: []\n", 10, "cases"),
    "duplicate_key": (GOOD.replace("  type: openai\n", "  type: openai\n  type: local\n"), 5, "duplicate key 'type'"),
    "number_option_typo": (
        GOOD.replace("{choice: [A, B]}", "{number: {decimal_koma: true}}"),
        19,
        "cases[1].answer.number: unknown key 'decimal_koma' (expected decimal_comma)",
    ),
    "number_false": (
        GOOD.replace("{choice: [A, B]}", "{number: false}"),
        19,
        "cases[1].answer.number: expected true or {decimal_comma: true}, got False",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_suite_is_one_line_with_file_and_line(tmp_path: Path, kind: str) -> None:
    text, line, expected = BAD[kind]
    path = write(tmp_path, text)
    with pytest.raises(BadInput) as info:
        load_suite(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert expected in message
    assert "\n" not in message


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_suite_cli_exit_2_without_traceback(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, BAD[kind][0])
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0]


def test_unset_api_key_variable_run_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "run", str(path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "DEMO_KEY" in proc.stderr and f"{path}:6:" in proc.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("answer: {json: /borough}", "answer: {json: /borough, choice: [A, B]}"), "exactly one of json, choice"),
        (("answer: {json: /borough}", "answer: {regex: '('}"), "regex does not compile"),
        (("answer: {json: /borough}", "answer: {json: '', schema: {type: 12}}"), "not a valid JSON Schema"),
        (("  model: gpt-4o-mini\n", ""), "provider type 'openai' needs `model`"),
        (("messages: [{role: user", "system: x\n    messages: [{role: user"), "`system` goes with `prompt`"),
        (("id: letter", "id: 'bad id'"), "cases[1].id"),
    ],
)
def test_more_rules(change: tuple[str, str], message: str) -> None:
    with pytest.raises(BadInput, match=None) as info:
        parse_suite(GOOD.replace(*change), "s.yml")
    assert message in str(info.value)
    assert str(info.value).startswith("s.yml:")


def test_not_a_mapping_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match=r"s\.yml:1: expected a mapping"):
        parse_suite("- just a list\n", "s.yml")
    with pytest.raises(BadInput, match="no such file"):
        load_suite(tmp_path / "absent.yml")


def test_odd_unknown_keys_are_named_as_written() -> None:
    # Found by the fuzzer: keys that look like pydantic's own location tags.
    for key in ("'['", "str", "list[int]"):
        with pytest.raises(BadInput) as info:
            parse_suite(GOOD + f"{key}: null\n", "s.yml")
        assert f"unknown key {key.strip(chr(39))!r}" in str(info.value) and str(info.value).startswith("s.yml:")


# Suites of every provider type, with the definition hashes the code gave them before the provider
# configs were split by type: committed baselines compare by these hashes, so they must not move. Two
# moved on purpose when the hash took in the provider's whole identity (issue 29): see BEFORE_IDENTITY.
PINNED_SUITES = {
    "openai": """\
version: 1
name: pin-openai
provider: {type: openai, model: gpt-4o-mini, api_key_env: DEMO_KEY, params: {temperature: 0, seed: 7}}
cases:
  - id: borough
    system: You answer in JSON.
    prompt: 'Where? Reply {"borough": ...}'
    answer: {json: /borough}
  - id: letter
    messages: [{role: user, content: "Q: A or B?"}]
    answer: {choice: [A, B]}
    provider: {params: {seed: 8}, base_url: "http://127.0.0.1:9/v1"}
""",
    "untyped": """\
version: 1
name: pin-untyped
provider: {model: m, headers: {X-Team: "${TEAM}"}}
cases:
  - {id: plain, prompt: hi}
""",
    "anthropic": """\
version: 1
name: pin-anthropic
provider: {type: anthropic, model: claude-x, params: {max_tokens: 50}}
cases:
  - {id: n, prompt: "2+2?", answer: {number: true}}
""",
    "http": """\
version: 1
name: pin-http
provider:
  type: http
  url: http://127.0.0.1:9/answer
  method: POST
  body: '{"q": {{ prompt|tojson }}}'
  completion_pointer: /answer
cases:
  - {id: h, prompt: "hello", answer: {text: {normalize: [strip, lower]}}}
  - {id: g, prompt: "hello", provider: {type: command, command: [echo, hi], input: json}}
""",
    "command": """\
version: 1
name: pin-command
provider: {type: command, command: "cat -", shell: true, params: {x: 1}}
cases:
  - {id: c, prompt: "x", answer: {regex: "(\\\\d+)"}}
""",
    "local": """\
version: 1
name: pin-local
provider: {type: local, params: {temperature: 0, max_tokens: 24}}
cases:
  - {id: l, prompt: "Fruit? (A) x (B) y", answer: {choice: [A, B]}}
  - {id: s, prompt: "y", provider: {model: /tmp/m.gguf, params: {seed: 3}}}
""",
}
PINNED_HASHES = {
    ("openai", "borough"): "sha256:a28f6661445bc688",
    ("openai", "letter"): "sha256:b796b6d38771a37c",
    ("untyped", "plain"): "sha256:e432173ea79a7c13",
    ("anthropic", "n"): "sha256:f69e1a82f4282ff8",
    ("http", "h"): "sha256:b2791721a97016fb",
    ("http", "g"): "sha256:87bc944bc7698358",  # `input: json` entered the hash (issue 29)
    ("command", "c"): "sha256:8dc6c83e426a85fe",  # `shell: true` entered the hash (issue 29)
    ("local", "l"): "sha256:3cd202f8c203058b",
    ("local", "s"): "sha256:1b5fc47179b9dc1f",
}
EXAMPLE_HASHES = {
    "capital": "sha256:aa1cb6410a052605",
    "letter": "sha256:5b994b45134caee9",
    "arithmetic": "sha256:e877affbe4390245",
    "haiku": "sha256:4fa33439e955fe58",
    "sampled": "sha256:c7a1593689e98f0f",
}


def test_definition_hashes_are_pinned_for_every_provider_type() -> None:
    found = {
        (name, case.id): case.definition_hash
        for name, text in PINNED_SUITES.items()
        for case in parse_suite(text, f"{name}.yml").resolved_cases()
    }
    assert found == PINNED_HASHES


# The two cases above that write a key the hash took in later (`input`, `shell`: what the program is
# handed and how it is run), as the first hashes had them: without those keys, nothing moved.
BEFORE_IDENTITY = {("http", "g"): "sha256:fdfbcce71e030a1f", ("command", "c"): "sha256:9dbc8d4a1301d7a7"}


def test_only_the_keys_the_hash_took_in_later_move_a_pinned_hash() -> None:
    without = {
        "http": PINNED_SUITES["http"].replace(", input: json", ""),
        "command": PINNED_SUITES["command"].replace(" shell: true,", ""),
    }
    found = {
        (name, case.id): case.definition_hash
        for name, text in without.items()
        for case in parse_suite(text, f"{name}.yml").resolved_cases()
    }
    assert {key: found[key] for key in BEFORE_IDENTITY} == BEFORE_IDENTITY
    assert found[("http", "h")] == PINNED_HASHES[("http", "h")]


def test_the_example_suite_keeps_its_definition_hashes() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "suite.yml"
    assert {case.id: case.definition_hash for case in load_suite(example).resolved_cases()} == EXAMPLE_HASHES


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("{choice: []}", "at least 2 items"),
        ("{choice: [A]}", "at least 2 items"),
        ("{choice: [A, a, B]}", "choice: 'A' and 'a' are one label (labels are matched ignoring case)"),
        ("{choice: [A, ' ']}", "choice: an empty label names nothing"),
        ("{json: borough}", "is not an RFC 6901 pointer, which starts with '/'"),
        ("{json: '/a~2b'}", "'~' must be followed by 0 or 1"),
        ("{json: '/a~'}", "'~' must be followed by 0 or 1"),
        (r"{regex: '\d*'}", "matches the empty string"),
        ("{regex: ''}", "matches the empty string"),
    ],
)
def test_a_parser_that_cannot_find_an_answer_is_exit_2_at_its_line(answer: str, message: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_suite(GOOD.replace("answer: {json: /borough}", f"answer: {answer}"), "s.yml")
    assert message in str(info.value)
    assert str(info.value).startswith("s.yml:14:") and info.value.exit_code == 2


@pytest.mark.parametrize("answer", ["{choice: [A, B, AB]}", "{json: '/a~0b/~1c'}", r"{regex: 'code: (\w*)'}"])
def test_parsers_that_can_find_an_answer_load(answer: str) -> None:
    without_expected = GOOD.replace("    expected: Queens\n", "")  # a city is no choice label
    parse_suite(without_expected.replace("answer: {json: /borough}", f"answer: {answer}"), "s.yml")


def test_aliases_may_add_a_bounded_number_of_nodes(tmp_path: Path) -> None:
    """Issue 25, item 6: the expanded size is summed, not walked, so a bomb is refused at once."""
    from stabilitygate.suite.load import MAX_ALIASED_NODES

    def suite_with(copies: int, block: int) -> str:
        items = ", ".join(f"k{i}: v" for i in range(block))
        return (
            f"version: 1\nname: s\nblock: &b {{{items}}}\nprovider: {{type: openai, model: m}}\n"
            f"many: [{', '.join(['*b'] * copies)}]\ncases: [{{id: a, prompt: p}}]\n"
        )

    per_copy = 1 + 2 * 50  # the mapping and its 50 key and value nodes
    fits = MAX_ALIASED_NODES // per_copy
    with pytest.raises(BadInput, match="unknown key 'block'"):  # past the alias check: validated as usual
        parse_suite(suite_with(fits, 50), "s.yml")
    with pytest.raises(BadInput, match=r"s\.yml:5: not valid YAML: its aliases stand for more than 100,000 nodes"):
        parse_suite(suite_with(fits + 2, 50), "s.yml")
