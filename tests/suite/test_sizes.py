"""sampling.baseline_samples and sampling.max_samples: defaults, overrides, and bad sizes at their line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from stabilitygate.cases import load_suite
from stabilitygate.errors import BadInput
from stabilitygate.metrics import MAX_SAMPLES
from stabilitygate.suite.model import ResolvedCase
from stabilitygate.suite.sizes import BASELINE_FACTOR, MAX_FACTOR, baseline_size, checked_samples, max_size

SUITE = """\
version: 1
name: sizes
provider: {type: openai, model: m, base_url: "http://127.0.0.1:9/v1", api_key_env: SIZES_KEY}
sampling:
  samples: 20
{sampling}cases:
  - id: plain
    prompt: a
  - id: own
    prompt: b
{case}"""


def suite_text(sampling: str, case: str) -> str:
    return SUITE.replace("{sampling}", textwrap.indent(sampling, "  ")).replace("{case}", textwrap.indent(case, "    "))


def load(tmp_path: Path, sampling: str = "", case: str = "") -> list[ResolvedCase]:
    path = tmp_path / "suite.yml"
    path.write_text(suite_text(sampling, case))
    return load_suite(path).resolved_cases()


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the last line of `text` containing `needle`."""
    return max(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_defaults_are_multiples_of_samples(tmp_path: Path) -> None:
    plain, _ = load(tmp_path)
    assert baseline_size(plain) == BASELINE_FACTOR * 20 == 100  # at most 100 for samples: 20
    assert max_size(plain) == MAX_FACTOR * 20 == 50  # the second stage is on by default


def test_suite_settings_and_case_overrides(tmp_path: Path) -> None:
    plain, own = load(
        tmp_path, "baseline_samples: 60\nmax_samples: 30\n", "baseline_samples: 80\nmax_samples: 20\nsamples: 20\n"
    )
    assert (baseline_size(plain), max_size(plain)) == (60, 30)
    assert (baseline_size(own), max_size(own)) == (80, 20)  # max_samples = samples: no second stage


def test_the_default_multiples_stop_at_the_bound_of_samples(tmp_path: Path) -> None:
    """Issue 37, item 4: `samples: 100000` would record 500,000, which every reader of the report refuses."""
    plain, own = load(tmp_path, case="samples: 100000\n")
    assert (own.samples, baseline_size(own), max_size(own)) == (MAX_SAMPLES, MAX_SAMPLES, MAX_SAMPLES)
    assert baseline_size(plain) == 100


@pytest.mark.parametrize("value", [1, 100_001, 10**9])
def test_a_samples_count_given_outside_the_suite_obeys_its_bound(value: int) -> None:
    with pytest.raises(BadInput, match=f"samples per case: {value:,}[,:].*expected 2 to 100,000"):
        checked_samples(value, named="samples per case")
    assert checked_samples(None, named="x") is None and checked_samples(MAX_SAMPLES, named="x") == MAX_SAMPLES


def test_an_override_of_samples_above_the_default_multiple_still_fits(tmp_path: Path) -> None:
    _, own = load(tmp_path, case="samples: 30\n")
    assert (own.samples, baseline_size(own), max_size(own)) == (30, 150, 75)


@pytest.mark.parametrize(
    ("sampling", "case", "at", "words"),
    [
        (
            "baseline_samples: 10\n",
            "",
            "baseline_samples",
            "sampling.baseline_samples: 10 is below sampling.samples 20",
        ),
        ("max_samples: 19\n", "", "max_samples", "sampling.max_samples: 19 is below sampling.samples 20"),
        ("", "max_samples: 12\n", "max_samples", "case 'own': cases[1].max_samples 12 is below its samples 20"),
        ("", "baseline_samples: 1\n", "baseline_samples", "greater than or equal to 2"),  # the schema's bound
        ("max_samples: 1\n", "", "max_samples", "greater than or equal to 2"),
        (
            "baseline_samples: 25\n",
            "samples: 30\n",
            "samples: 30",
            "sampling.baseline_samples 25 is below its samples 30",
        ),
    ],
)
def test_sizes_below_samples_are_bad_input_at_their_line(
    tmp_path: Path, sampling: str, case: str, at: str, words: str
) -> None:
    with pytest.raises(BadInput) as caught:
        load(tmp_path, sampling, case)
    assert caught.value.line == line_of(suite_text(sampling, case), at)
    assert words in str(caught.value)
    assert str(tmp_path / "suite.yml") in str(caught.value)
