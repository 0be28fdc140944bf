from __future__ import annotations

import json
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.sampling.judgments_file import append_judgment, judgments_path, read_judgments, start_judgments_file

KEY = PairKey.of("judge-key", "The store closes at 9 pm", "The shop shuts at 9")
JUDGMENT = Judgment.of_reply("entailment", {"prompt_tokens": 60, "completion_tokens": 1})


def test_the_judgments_file_sits_beside_the_samples_file() -> None:
    assert judgments_path("out/run.jsonl") == Path("out/run.judgments.jsonl")
    assert judgments_path("samples") == Path("samples.judgments.jsonl")


def test_written_judgments_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.judgments.jsonl"
    other = PairKey.of("judge-key", "b", "a")
    path.write_text("left from an earlier run\n")
    start_judgments_file(path)
    append_judgment(path, KEY, JUDGMENT, "shop")
    append_judgment(path, other, Judgment.of_reply("no idea"), "shop")
    assert read_judgments(path) == {KEY: JUDGMENT, other: Judgment(None, "no idea", {})}
    first = json.loads(path.read_text().splitlines()[0])
    assert first["case"] == "shop" and first["premise"] == KEY.premise and "The store" not in path.read_text()


def test_no_file_is_no_judgments(tmp_path: Path) -> None:
    assert read_judgments(tmp_path / "absent.judgments.jsonl") == {}


def test_a_damaged_line_is_bad_input_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "run.judgments.jsonl"
    append_judgment(path, KEY, JUDGMENT, "shop")
    good = path.read_text()
    path.write_text(good + good.replace('"entailment"', '"perhaps"'))
    with pytest.raises(BadInput, match="label") as caught:
        read_judgments(path)
    assert caught.value.line == 2
    path.write_text(good + '{"judge": "k", "premise": "short", "hypothesis": "x"}\n')
    with pytest.raises(BadInput, match="premise") as caught:
        read_judgments(path)
    assert caught.value.line == 2


def test_a_last_line_cut_short_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "run.judgments.jsonl"
    append_judgment(path, KEY, JUDGMENT, "shop")
    path.write_text(path.read_text() + '{"judge": "k", "prem')
    assert read_judgments(path) == {KEY: JUDGMENT}
