"""Variants resolved into cases: what each override replaces, and every bad variant exit 2 at its line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stabilitygate.cases import load_suite
from stabilitygate.cli import main
from stabilitygate.errors import BadInput
from tests.support.suites import parse_suite

SUITE = """\
version: 1
name: remedies
provider:
  type: openai
  model: gpt-4o-mini
  params: {temperature: 0, max_tokens: 64}
variants:
  seeded: {params: {seed: 7}}
  strict:
    params:
      response_format: {type: json_schema, json_schema: {name: a, schema: {type: object}}}
    answer: {json: /answer}
cases:
  - id: borough
    system: You answer briefly.
    prompt: Where was Feynman born?
    variants:
      reworded: {prompt: "In which borough was Feynman born?", system: Answer with the borough only.}
      cached:
        provider: {type: http, url: "http://127.0.0.1:9/answer", completion_pointer: /answer}
        idempotency: shared
  - id: letter
    messages: [{role: system, content: Pick one.}, {role: user, content: "A or B?"}]
    answer: {choice: [A, B]}
    expected: A
    variants:
      rewritten: {messages: [{role: user, content: "A or B? One letter."}]}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent(text))
    return path


def test_each_case_gets_the_suite_variants_then_its_own_in_file_order() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    assert [v.name for v in loaded.variants["borough"]] == ["seeded", "strict", "reworded", "cached"]
    assert [v.name for v in loaded.variants["letter"]] == ["seeded", "strict", "rewritten"]
    seeded = loaded.variants["borough"][0]
    assert seeded.case.id == "borough@seeded" and seeded.case_id == "borough" and seeded.overrides == ("params",)
    assert seeded.line == 8 and seeded.case.line == 8  # the variant's own line
    assert seeded.case.provider.params == {"temperature": 0, "max_tokens": 64, "seed": 7}
    assert seeded.case.messages == loaded.cases[0].messages
    assert seeded.case.definition_hash != loaded.cases[0].definition_hash


def test_params_merge_key_by_key_and_answer_replaces_the_parser() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    strict = loaded.variants["borough"][1]
    assert strict.overrides == ("params", "answer")
    assert strict.case.provider.params is not None
    assert strict.case.provider.params["response_format"]["type"] == "json_schema"
    assert strict.case.provider.params["max_tokens"] == 64
    assert strict.case.answer is not None and strict.case.answer.kind == "json"
    assert loaded.cases[0].answer is None  # the case as written keeps its own


def test_prompt_and_system_replace_those_messages_and_messages_replaces_all() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    reworded = loaded.variants["borough"][2].case
    assert [(m.role, m.content) for m in reworded.messages] == [
        ("system", "Answer with the borough only."),
        ("user", "In which borough was Feynman born?"),
    ]
    rewritten = loaded.variants["letter"][2].case
    assert [(m.role, m.content) for m in rewritten.messages] == [("user", "A or B? One letter.")]
    assert rewritten.answer == loaded.cases[1].answer


def test_a_provider_of_another_type_replaces_it_and_shared_keys_expect_one_completion() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    cached = loaded.variants["borough"][3].case
    assert cached.provider.type == "http" and cached.provider.params is None  # shares nothing with openai
    assert cached.idempotency == "shared" and cached.thresholds.max_unique == 1
    assert loaded.cases[0].idempotency == "per_sample" and loaded.cases[0].thresholds.max_unique is None


def test_a_suite_without_variants_has_none() -> None:
    loaded = parse_suite(SUITE.split("variants:")[0] + "cases: [{id: a, prompt: p}]\n", "suite.yml")
    assert loaded.variants == {}


@pytest.mark.parametrize(
    ("variants", "line", "message"),
    [
        ("  strict: {parms: {seed: 1}}\n", 9, "unknown key 'parms' at variants.strict (expected one of: answer,"),
        ("  strict: {}\n", 9, "variants.strict: a variant must override something"),
        ("  strict: {description: only words}\n", 9, "a variant must override something"),
        ("  strict: {provider: {base_urll: x}}\n", 9, "unknown key 'base_urll' at variants.strict.provider"),
        ("  strict: {provider: {type: nope}}\n", 9, "variants.strict.provider.type: unknown provider type 'nope'"),
        ("  strict: {messages: [{role: user, content: x}], prompt: y}\n", 9, "`messages` replaces the case's prompt"),
        ("  strict: {params: {when: 2024-01-01}}\n", 9, "params must be plain JSON values"),
        ("  bad name: {params: {seed: 1}}\n", 9, "variants.bad name"),
    ],
)
def test_a_bad_variant_is_exit_2_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], variants: str, line: int, message: str
) -> None:
    text = f"""\
version: 1
name: remedies
provider: {{type: openai, model: m}}
sampling: {{samples: 4}}
cases:
  - id: a
    prompt: p
variants:
{variants}"""
    path = write(tmp_path, text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:{line}:" in err and message in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_case_variant_that_shares_a_suite_variant_name_is_exit_2_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = SUITE.replace("reworded: {prompt", "seeded: {prompt")
    path = write(tmp_path, text)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:18:" in err
    assert "case 'borough': variant 'seeded' shares its name with the suite's variant at line 8" in err


def test_a_variant_name_written_twice_is_exit_2_at_the_second(tmp_path: Path) -> None:
    text = SUITE.replace("  strict:\n", "  seeded: {params: {seed: 8}}\n  strict:\n", 1)
    with pytest.raises(BadInput, match="duplicate key 'seeded'") as caught:
        load_suite(write(tmp_path, text))
    assert caught.value.line == 9


def test_a_parser_the_expected_answer_does_not_fit_is_exit_2_at_the_variant(tmp_path: Path) -> None:
    text = SUITE.replace("rewritten: {messages", "numeric: {answer: {number: true}}\n      rewritten: {messages")
    with pytest.raises(BadInput, match=r"cases\[1\].variants.numeric.answer: the case's `expected` does not fit") as e:
        load_suite(write(tmp_path, text))
    assert e.value.line == 27


def test_a_valid_suite_with_variants_validates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(write(tmp_path, SUITE))]) == 0
    assert "valid (2 cases" in capsys.readouterr().out


def test_the_bundled_remedies_example_loads_with_its_variants() -> None:
    loaded = load_suite(Path(__file__).resolve().parents[1] / "examples" / "remedies.yml")
    assert {cid: [v.name for v in vs] for cid, vs in loaded.variants.items()} == {
        "sampled": ["greedy", "enum"],
        "haiku": ["hot"],
    }
    greedy = loaded.variants["sampled"][0].case
    assert greedy.provider.params is not None and greedy.provider.params["temperature"] == 0
    assert loaded.suite.sampling.probe == "concurrency"


HTTP_SUITE = """\
version: 1
name: app
provider:
  type: http
  url: http://127.0.0.1:9/classify
  body: '{{"ticket": {{{{ prompt|tojson }}}}}}'
  completion_pointer: /label
sampling: {{samples: 4}}
cases:
  - id: ticket
    prompt: I was charged twice.
    variants:
      {variant}
"""


def test_a_variant_that_changes_nothing_the_provider_sends_is_exit_2_naming_why(tmp_path: Path) -> None:
    """A `greedy` params variant on an http case whose body sends no params was measured and reported
    "better" for noise alone; the command refuses it at load, at the variant's line."""
    path = write(tmp_path, HTTP_SUITE.format(variant="greedy: {params: {temperature: 0}}"))
    done = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"stabilitygate: error: {path}:13: cases[0].variants.greedy: overrides params, but case 'ticket''s first "
        "request would be sent unchanged: its http provider sends what its `body` template renders (params only "
        "where the template uses them), to its url, with its headers; expected an override that changes what is sent"
    )


@pytest.mark.parametrize(
    "variant",
    [
        "reworded: {prompt: Was I charged twice}",  # the body renders the prompt
        "other: {provider: {url: 'http://127.0.0.1:9/v2/classify'}}",  # another address
        "read: {params: {temperature: 0}, answer: {text: {normalize: [lower]}}}",  # a parser is not sent
    ],
)
def test_a_variant_that_changes_what_is_sent_or_how_it_is_read_loads(tmp_path: Path, variant: str) -> None:
    loaded = load_suite(write(tmp_path, HTTP_SUITE.format(variant=variant)))
    assert len(loaded.variants["ticket"]) == 1


def test_params_reach_an_http_body_that_sends_them_and_an_api_provider_always(tmp_path: Path) -> None:
    sends = HTTP_SUITE.replace("prompt|tojson }}}}}}'", 'prompt|tojson }}}}, "params": {{{{ params|tojson }}}}}}\'')
    assert load_suite(write(tmp_path, sends.format(variant="greedy: {params: {temperature: 0}}"))).variants
    same = SUITE.replace("seeded: {params: {seed: 7}}", "same: {params: {temperature: 0}}")  # the value it has
    with pytest.raises(BadInput, match=r"variants\.same: overrides params, but case 'borough''s first request"):
        load_suite(write(tmp_path, same))
