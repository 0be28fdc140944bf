"""The run-wide bound on what the samples hold: long texts cut past it, every figure kept (issue 37, item 2)."""

from __future__ import annotations

import hashlib
import json
import logging
import random
import string
from pathlib import Path

import pytest

from stabilitygate.cli import main
from stabilitygate.samples import Sample
from stabilitygate.sampling import held_texts
from stabilitygate.sampling.held_texts import CUT_AT_CHARS, KEPT_CHARS, HeldTexts, cut_text, whole_of
from stabilitygate.suite.model import AnswerSpec
from tests.pipeline.conftest import write_suite
from tests.support.openai_server import ScriptedOpenAI


def text(seed: int, chars: int = CUT_AT_CHARS * 2, end: str = "") -> str:
    rng = random.Random(seed)
    words = " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(1, 9))) for _ in range(chars // 5))
    return words[: chars - len(end)] + end


def sample(index: int, body: str, case: str = "c") -> Sample:
    return Sample(case=case, index=index, text=body)


def test_below_the_bound_nothing_is_cut_past_it_long_texts_are_said_once(caplog: pytest.LogCaptureFixture) -> None:
    held = HeldTexts.of([], limit=3 * CUT_AT_CHARS * 2)
    first = [held.hold(sample(i, text(i))) for i in range(3)]
    assert [s.text for s in first] == [text(i) for i in range(3)] and held.cut == 0
    with caplog.at_level(logging.WARNING, logger="stabilitygate"):
        later = [held.hold(sample(3 + i, body)) for i, body in enumerate([text(0), text(4), "short", text(5), None])]
    assert later[0].text is first[0].text  # seen again: held as first held, one string for both
    assert [s.text for s in later[1:]] == [cut_text(text(4)), "short", cut_text(text(5)), None] and held.cut == 2
    assert held.hold(sample(9, text(4))).text == later[1].text  # equal completions stay equal
    assert [r.message.count("held cut") for r in caplog.records] == [1]


def test_a_cut_keeps_the_ends_and_names_the_whole() -> None:
    whole = text(2)
    kept = cut_text(whole)
    assert kept.startswith(whole[:KEPT_CHARS]) and kept.endswith(whole[-KEPT_CHARS:])
    assert whole_of(kept) == (len(whole), hashlib.sha256(whole.encode()).hexdigest())
    assert whole_of(whole) is None and whole_of("short") is None
    assert cut_text(text(3)) != kept and cut_text(text(2)) == kept  # identity kept: equal stays equal


@pytest.mark.parametrize(
    ("answer", "where", "cut"),
    [
        ({"regex": r"ANSWER: (\w+)"}, "end", True),
        ({"regex": r"ANSWER: (\w+)"}, "middle", False),  # the cut would lose it: held whole
        ({"json": "/a"}, "whole-json", False),
        ({"choice": ["yes", "no"]}, "end", True),
    ],
    ids=["answer-at-the-end", "answer-in-the-middle", "json-document", "choice"],
)
def test_a_text_is_cut_only_when_its_cut_parses_as_the_whole_does(
    answer: dict[str, object], where: str, cut: bool
) -> None:
    spec = AnswerSpec.model_validate(answer)
    body = {
        "end": text(4, end=" ANSWER: yes"),
        "middle": text(4)[:CUT_AT_CHARS] + " ANSWER: yes " + text(5)[:CUT_AT_CHARS],
        "whole-json": '{"a": "' + "x" * CUT_AT_CHARS * 2 + '"}',
    }[where]
    held = HeldTexts(limit=0, answers={"c": spec})
    assert (held.hold(sample(0, body)).text != body) is cut


def test_a_run_past_the_bound_reports_what_scoring_its_whole_samples_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing is lost from the figures: the run holds cut texts, `score` reads the samples file whole."""
    monkeypatch.setattr(held_texts, "MAX_HELD_CHARS", 3 * CUT_AT_CHARS)
    texts = {label: text(10 + i, end=f" ANSWER: {label}") for i, label in enumerate("BAC")}
    # Each half in its own draw, the second starting with a text the first held cut.
    answers = [(texts[label], 1) for label in "BACBA" + "ABCAB"]
    with ScriptedOpenAI({"q": answers}) as server:
        case = {"id": "c", "prompt": "q", "answer": {"regex": r"ANSWER: (\w)"}}
        # The probe draws each half in a draw of its own: the bound is the run's, over both.
        sampling = {"samples": 10, "concurrency": 2, "probe": "concurrency"}
        suite = write_suite(tmp_path, server.base_url, [case], sampling=sampling)
        samples = tmp_path / "s.jsonl"
        out = ["--samples-out", str(samples), "--report-json", str(tmp_path / "run.json")]
        assert main(["run", str(suite), "--no-progress", *out]) == 0
    said = capsys.readouterr().err
    assert said.count("held cut") == 1
    assert main(["score", str(samples), "--suite", str(suite), "--report-json", str(tmp_path / "score.json")]) == 0
    run, scored = (json.loads((tmp_path / name).read_text())["cases"] for name in ("run.json", "score.json"))
    assert run == scored and run[0]["completions"][0]["chars"] == len(texts["B"])
    assert [row["count"] for row in run[0]["completions"]] == [4, 4, 2]
