"""The values the command line, the Action and the library share: one shard parser for all of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.github.inputs import get_shard
from stabilitygate.pipeline.options import Shard, default_baseline_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("text", "shard"), [("2/3", Shard(2, 3)), (" 1 / 1 ", Shard(1, 1)), ("10/12", Shard(10, 12))])
def test_a_shard_is_k_of_n(text: str, shard: Shard) -> None:
    assert Shard.parse(text, name="--shard") == shard
    assert Shard.parse(str(shard), name="--shard") == shard


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "2/3/4", "-1/2", "", "1/0"])
def test_anything_else_is_bad_input_naming_where_it_came_from(text: str) -> None:
    with pytest.raises(BadInput) as info:
        Shard.parse(text, name="input `shard`")
    assert str(info.value) == f"input `shard`: expected K/N with 1 <= K <= N, such as 2/3, got {text!r}"
    assert info.value.exit_code == 2


def test_the_command_line_and_the_action_read_a_shard_alike() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "run", "x.yml", "--shard", "3/2"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == "stabilitygate: error: --shard: expected K/N with 1 <= K <= N, such as 2/3, got '3/2'"
    with pytest.raises(BadInput, match=r"^input `shard`: expected K/N with 1 <= K <= N, such as 2/3, got '3/2'$"):
        get_shard({"INPUT_SHARD": "3/2"})
    assert get_shard({"INPUT_SHARD": " 2/3 "}) == Shard(2, 3)
    assert get_shard({}) is None


def test_the_default_baseline_sits_beside_the_suite() -> None:
    assert default_baseline_path(Path(".stability/suite.yml")) == Path(".stability/suite.baseline.json")
