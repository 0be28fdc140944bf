from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stabilitygate.errors import EXIT_BAD_INPUT, BadInput
from stabilitygate.github.inputs import ActionInputs, env_name, match_reports, read_inputs
from stabilitygate.pipeline.options import Shard


def test_env_name_keeps_the_hyphen() -> None:
    assert env_name("update-baseline") == "INPUT_UPDATE-BASELINE"
    assert env_name("github-token") == "INPUT_GITHUB-TOKEN"


def test_defaults_match_action_yml() -> None:
    assert read_inputs({}) == ActionInputs(
        suite=".stability/suite.yml",
        baseline=None,
        samples=None,
        update_baseline=False,
        comment=True,
        github_token=None,
        fail_on="regression",
        working_directory=None,
        shard=None,
        merge=(),
    )


def test_every_input_read_from_its_hyphenated_variable() -> None:
    inputs = read_inputs(
        {
            "INPUT_SUITE": " checks/llm.yml ",
            "INPUT_BASELINE": "checks/base.json",
            "INPUT_SAMPLES": "12",
            "INPUT_UPDATE-BASELINE": "true",
            "INPUT_COMMENT": "FALSE",
            "INPUT_GITHUB-TOKEN": "ghs_abc",
            "INPUT_FAIL-ON": "never",
            "INPUT_WORKING-DIRECTORY": "service",
        }
    )
    assert inputs == ActionInputs("checks/llm.yml", "checks/base.json", 12, True, False, "ghs_abc", "never", "service")
    assert read_inputs({"INPUT_SHARD": " 2/3 "}).shard == Shard(2, 3)
    assert read_inputs({"INPUT_MERGE": "shards/**/report.json"}).merge == ("shards/**/report.json",)


def test_underscored_names_are_not_the_inputs() -> None:
    # The runner keeps hyphens, so INPUT_UPDATE_BASELINE is some other variable.
    assert read_inputs({"INPUT_UPDATE_BASELINE": "true"}).update_baseline is False


def test_empty_values_mean_the_default() -> None:
    inputs = read_inputs({"INPUT_SUITE": "", "INPUT_SAMPLES": " ", "INPUT_COMMENT": "", "INPUT_FAIL-ON": ""})
    assert (inputs.suite, inputs.samples, inputs.comment, inputs.fail_on) == (
        ".stability/suite.yml",
        None,
        True,
        "regression",
    )


@pytest.mark.parametrize("word", ["yes", "1", "on", "tru", "y"])
def test_booleans_are_strict(word: str) -> None:
    with pytest.raises(BadInput) as caught:
        read_inputs({"INPUT_UPDATE-BASELINE": word})
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert "update-baseline" in str(caught.value) and word in str(caught.value)


@pytest.mark.parametrize("value", ["abc", "1", "0", "-3", "2.5", "1e3"])
def test_samples_must_be_a_whole_number_of_at_least_two(value: str) -> None:
    with pytest.raises(BadInput, match="samples"):
        read_inputs({"INPUT_SAMPLES": value})


@pytest.mark.parametrize("value", ["100001", "1000000000", "9" * 5000], ids=["100001", "1e9", "5000-digits"])
def test_samples_obey_the_suites_bound(value: str) -> None:
    """Issue 37, item 2: `samples: 100001` in the suite is exit 2, and so is the input (it sampled until killed)."""
    with pytest.raises(BadInput, match=r"input `samples`: .*expected 2 to 100,000"):
        read_inputs({"INPUT_SAMPLES": value})


def test_fail_on_choices() -> None:
    assert read_inputs({"INPUT_FAIL-ON": "fail"}).fail_on == "fail"
    assert read_inputs({"INPUT_FAIL-ON": "warn"}).fail_on == "warn"
    with pytest.raises(BadInput, match="regression, fail, warn, never"):
        read_inputs({"INPUT_FAIL-ON": "sometimes"})


def test_accept_baseline_suite_is_read_as_written() -> None:
    assert read_inputs({}).accept_baseline_suite is None
    assert read_inputs({"INPUT_ACCEPT-BASELINE-SUITE": " old-name "}).accept_baseline_suite == "old-name"


def test_action_yml_declares_exactly_these_inputs_with_the_same_defaults() -> None:
    action = yaml.safe_load((Path(__file__).resolve().parents[2] / "action.yml").read_text(encoding="utf-8"))
    declared = action["inputs"]
    assert set(declared) == {
        "suite",
        "baseline",
        "samples",
        "update-baseline",
        "comment",
        "github-token",
        "fail-on",
        "working-directory",
        "shard",
        "merge",
        "changed-only",
        "comment-from",
        "pr-number",
        "accept-baseline-suite",
        "variants",
    }
    assert set(action["outputs"]) == {"verdict", "outcome", "report-json", "report-markdown", "failed-cases"}
    assert declared["github-token"]["default"] == "${{ github.token }}"
    # What the runner would pass for each default gives what read_inputs assumes when nothing is set.
    env = {env_name(name): str(spec.get("default", "")) for name, spec in declared.items() if name != "github-token"}
    assert read_inputs(env) == read_inputs({})
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}


@pytest.mark.parametrize(("value", "expected"), [("1/1", Shard(1, 1)), ("3/3", Shard(3, 3)), ("2 / 10", Shard(2, 10))])
def test_shard_is_k_of_n(value: str, expected: Shard) -> None:
    assert read_inputs({"INPUT_SHARD": value}).shard == expected


@pytest.mark.parametrize("value", ["0/3", "4/3", "3", "1/0", "a/b", "-1/3", "1/3/5"])
def test_a_bad_shard_is_bad_input_naming_the_input(value: str) -> None:
    with pytest.raises(BadInput) as caught:
        read_inputs({"INPUT_SHARD": value})
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert "`shard`" in str(caught.value) and repr(value) in str(caught.value)


def test_merge_takes_one_pattern_per_line_and_skips_blank_lines() -> None:
    inputs = read_inputs({"INPUT_MERGE": "  shards/a/report.json\n\n shards/b/*.json \n"})
    assert inputs.merge == ("shards/a/report.json", "shards/b/*.json")


def test_shard_and_merge_exclude_each_other() -> None:
    with pytest.raises(BadInput) as caught:
        read_inputs({"INPUT_SHARD": "1/2", "INPUT_MERGE": "shards/**/report.json"})
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert "`shard`" in str(caught.value) and "`merge`" in str(caught.value)


def test_samples_do_not_apply_to_a_merge() -> None:
    with pytest.raises(BadInput, match=r"`samples`.*`merge`"):
        read_inputs({"INPUT_MERGE": "r.json", "INPUT_SAMPLES": "5"})


def test_match_reports_globs_recursively_relative_to_the_directory(tmp_path: Path) -> None:
    for name in ("shards/one/shard-1-of-2/report.json", "shards/two/shard-2-of-2/report.json", "shards/x.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / "shards" / "dir.json").mkdir()  # a directory is not a report
    found = match_reports(["shards/**/report.json", "shards/one/*/report.json", "shards/*.json"], tmp_path)
    assert found == ["shards/one/shard-1-of-2/report.json", "shards/two/shard-2-of-2/report.json", "shards/x.json"]


def test_match_reports_matching_nothing_names_the_pattern(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as caught:
        match_reports(["shards/**/report.json"], tmp_path)
    assert caught.value.exit_code == EXIT_BAD_INPUT
    assert "`shards/**/report.json` matches no file" in str(caught.value)


def test_variants_is_a_boolean_input_that_goes_without_merge_and_comment_from() -> None:
    assert read_inputs({"INPUT_VARIANTS": "true"}).variants is True
    assert read_inputs({}).variants is False
    with pytest.raises(BadInput, match="input `variants`: expected true or false"):
        read_inputs({"INPUT_VARIANTS": "yes"})
    for other in ({"INPUT_MERGE": "shards/**/report.json"}, {"INPUT_COMMENT-FROM": "report.json"}):
        with pytest.raises(BadInput, match="input `variants` measures variants while sampling"):
            read_inputs({"INPUT_VARIANTS": "true", **other})
