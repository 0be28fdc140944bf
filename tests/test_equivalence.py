"""`equivalence: {judge: PROVIDER}` in the suite file: resolved per case, validated like `provider:`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from stabilitygate.cases import check_environment, load_suite, secret_env_names
from stabilitygate.errors import BadInput

SUITE = """\
version: 1
name: demo
provider: {type: openai, model: m, base_url: "http://127.0.0.1:9/v1"}
equivalence:
  judge:
    type: openai
    model: judge-model
    api_key_env: JUDGE_KEY
    params: {temperature: 0}
cases:
  - id: suite_judge
    prompt: Q1?
  - id: own_judge
    prompt: Q2?
    equivalence:
      judge: {type: anthropic, model: claude-judge}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.yml"
    path.write_text(textwrap.dedent(text))
    return path


def test_each_case_gets_the_suite_judge_or_its_own(tmp_path: Path) -> None:
    suite_judge, own_judge = load_suite(write(tmp_path, SUITE)).resolved_cases()
    assert suite_judge.entailment_judge is not None and own_judge.entailment_judge is not None
    assert (suite_judge.entailment_judge.type, suite_judge.entailment_judge.model) == ("openai", "judge-model")
    assert suite_judge.entailment_judge.params == {"temperature": 0}
    assert (own_judge.entailment_judge.type, own_judge.entailment_judge.model) == ("anthropic", "claude-judge")
    assert own_judge.entailment_judge.base_url == "https://api.anthropic.com"  # the type's defaults filled in


def test_without_equivalence_no_case_has_a_judge_and_the_hash_is_unchanged(tmp_path: Path) -> None:
    plain = SUITE.split("equivalence:")[0] + "cases:\n  - id: suite_judge\n    prompt: Q1?\n"
    (without,) = load_suite(write(tmp_path, plain)).resolved_cases()
    with_judge = load_suite(write(tmp_path, SUITE)).resolved_cases()[0]
    assert without.entailment_judge is None
    # The judge reads the answers; it does not change the question put to the model.
    assert with_judge.definition_hash == without.definition_hash


def test_the_judges_key_is_a_secret_and_must_be_set(tmp_path: Path) -> None:
    loaded = load_suite(write(tmp_path, SUITE))
    assert {"JUDGE_KEY", "ANTHROPIC_API_KEY"} <= secret_env_names(loaded.resolved_cases())
    with pytest.raises(BadInput, match="JUDGE_KEY holding the entailment judge's API key") as caught:
        check_environment(loaded, {"ANTHROPIC_API_KEY": "a" * 20})
    assert caught.value.line == 8  # api_key_env under equivalence.judge


@pytest.mark.parametrize(
    ("edit", "line", "message"),
    [
        (("    model: judge-model\n", "    model: judge-model\n    temprature: 0\n"), 8, "unknown key 'temprature'"),
        (("  judge:\n", "  judges: {}\n  judge:\n"), 5, "unknown key 'judges' at equivalence"),
        (("    type: openai\n", "    type: openia\n"), 6, "unknown provider type 'openia'"),
        (("      judge: {type: anthropic", "      judge: {type: nope"), 16, "equivalence.judge.type"),
        (("model: claude-judge}", "model: c, url: x}"), 16, r"unknown key 'url' at cases\[1\].equivalence.judge"),
        (("    params: {temperature: 0}\n", "    params: [1]\n"), 9, "equivalence.judge.params"),
    ],
)  # fmt: skip
def test_a_bad_judge_block_is_one_line_at_its_line(
    tmp_path: Path, edit: tuple[str, str], line: int, message: str
) -> None:
    text = SUITE.replace(*edit)
    assert text != SUITE
    with pytest.raises(BadInput, match=message) as caught:
        load_suite(write(tmp_path, text))
    assert caught.value.line == line


def test_an_equivalence_without_a_judge_is_refused_at_its_line(tmp_path: Path) -> None:
    text = SUITE.replace(
        "    equivalence:\n      judge: {type: anthropic, model: claude-judge}\n", "    equivalence: {}\n"
    )
    with pytest.raises(BadInput, match=r"missing required key 'cases\[1\].equivalence.judge'") as caught:
        load_suite(write(tmp_path, text))
    assert caught.value.line == 15


def test_the_cli_exits_2_naming_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stabilitygate.cli import main

    path = write(tmp_path, SUITE.replace("    type: openai\n", "    type: openia\n"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6:" in err and "Traceback" not in err
