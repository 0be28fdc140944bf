"""The samples JSONL file: written line by line, read back strictly, an interrupted last line forgiven."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.samples import Sample, TokenLogprob
from stabilitygate.sampling.samples_file import SamplesWriter, read_samples

GOOD = Sample(
    case="borough",
    index=0,
    text="Queens, New York",
    latency_ms=12.5,
    fingerprint="fp_1",
    model="gpt-test",
    usage={"prompt_tokens": 5, "completion_tokens": 3},
    finish_reason="stop",
)
FAILED = Sample(case="borough", index=1, text=None, error="http_500: server error", attempts=6)
UNICODE = Sample(case="zürich", index=0, text='Zürich — 東京 "quoted"\nline two')
WITH_LOGPROBS = Sample(
    case="lp", index=0, text="A", logprobs=(TokenLogprob("A", -0.01, "B", -4.6), TokenLogprob("!", -0.5, None, None))
)


def test_writer_writes_one_compact_line_per_sample_flushed_at_once(tmp_path: Path) -> None:
    path = tmp_path / "out" / "samples.jsonl"  # the folder is created
    with SamplesWriter(path) as writer:
        writer.write(GOOD)
        # Already on disk before the file is closed: an interruption now keeps this line.
        assert path.read_text(encoding="utf-8") == (
            '{"case":"borough","index":0,"text":"Queens, New York","error":null,"latency_ms":12.5,'
            '"fingerprint":"fp_1","model":"gpt-test","usage":{"prompt_tokens":5,"completion_tokens":3},'
            '"finish_reason":"stop","attempts":1}\n'
        )
        writer(FAILED)  # callable: usable as on_sample directly
        writer.write(UNICODE)
        writer.write(WITH_LOGPROBS)
        assert writer.count == 4
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5 and lines[-1] == ""
    assert json.loads(lines[1]) == {
        "case": "borough",
        "index": 1,
        "text": None,
        "error": "http_500: server error",
        "latency_ms": None,
        "fingerprint": None,
        "model": None,
        "usage": None,
        "finish_reason": None,
        "attempts": 6,
    }
    assert "Zürich — 東京" in lines[2] and "\\n" in lines[2]  # UTF-8 kept, the newline escaped
    assert json.loads(lines[3])["logprobs"] == [["A", -0.01, "B", -4.6], ["!", -0.5, None, None]]


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SamplesWriter(path) as writer:
        for sample in (GOOD, FAILED, UNICODE, WITH_LOGPROBS):
            writer.write(sample)
    assert read_samples(path) == [GOOD, FAILED, UNICODE, WITH_LOGPROBS]


def test_non_finite_logprobs_become_null(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    sample = Sample(case="c", index=0, text="a", logprobs=(TokenLogprob("a", float("-inf"), "b", float("nan")),))
    with SamplesWriter(path) as writer:
        writer.write(sample)
    assert '"logprobs":[["a",null,"b",null]]' in path.read_text()
    assert read_samples(path)[0].logprobs == (TokenLogprob("a", None, "b", None),)


def test_writer_starts_afresh_unless_appending(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("old line\n")
    with SamplesWriter(path) as writer:
        writer.write(GOOD)
    with SamplesWriter(path, append=True) as writer:
        writer.write(FAILED)
    assert read_samples(path) == [GOOD, FAILED]


def test_unwritable_path_is_bad_input(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(BadInput, match="cannot write the samples file"), SamplesWriter(blocker / "s.jsonl"):
        pass


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(text.encode("utf-8"))
    return path


def _line(**fields: object) -> str:
    return json.dumps({"case": "c", "index": 0, "text": "t", **fields})


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "at the top level: Input should be a dictionary"),
        ('{"case": "c", "text": "t"}', "at index: Field required"),
        ('{"index": 1, "text": "t"}', "at case: Field required"),
        ('{"case": "c", "index": 1}', "at text: Field required"),
        (_line(case=""), "at case: String should have at least 1 character"),
        (_line(index="1"), "at index: Input should be a valid integer"),
        (_line(index=True), "at index: Input should be a valid integer"),
        (_line(index=-1), "at index: Input should be greater than or equal to 0"),
        (_line(text=5), "at text: Input should be a valid string"),
        (_line(error=3), "at error: Input should be a valid string"),
        (_line(latency_ms="fast"), "at latency_ms: Input should be a valid number"),
        (
            '{"case": "c", "index": 0, "text": "t", "latency_ms": Infinity}',
            "at latency_ms: Input should be a finite number",
        ),
        (_line(usage={"prompt_tokens": "5"}), "at usage/prompt_tokens: Input should be a valid integer"),
        (_line(usage=[1]), "at usage: Input should be a valid dictionary"),
        (_line(attempts=0), "at attempts: Input should be greater than or equal to 1"),
        (_line(logprobs=[["a"]]), "at logprobs/0/1: Field required"),
        (_line(logprobs=[[1, -0.1]]), "at logprobs/0/0: Input should be a valid string"),
        (_line(logprobs=[["a", -0.1, "b", -1, 0]]), "at logprobs/0: Tuple should have at most 4 items"),
        (_line(logprobs="x"), "at logprobs: Input should be a valid tuple"),
    ],
)
def test_broken_lines_are_bad_input_with_the_line_number(tmp_path: Path, bad: str, message: str) -> None:
    path = _write(tmp_path, _line(index=5) + "\n" + bad + "\n" + _line(index=6) + "\n")
    with pytest.raises(BadInput) as info:
        read_samples(path)
    assert str(info.value).startswith(f"{path}:2: ")
    assert message in str(info.value)


def test_duplicate_sample_is_bad_input(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(index=1) + "\n" + _line(index=2) + "\n" + _line(index=1) + "\n")
    with pytest.raises(BadInput, match=r":3: sample 1 of case 'c' appears twice \(first at line 1\)"):
        read_samples(path)


def test_a_last_line_cut_by_an_interruption_is_dropped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CLI run earlier in the session stops the package logger propagating to the root, where caplog listens.
    monkeypatch.setattr(logging.getLogger("stabilitygate"), "propagate", True)
    path = _write(tmp_path, _line(index=0) + "\n" + _line(index=1) + "\n" + _line(index=2)[:20])
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING):
        samples = read_samples(path, on_warning=warnings.append)
    assert [s.index for s in samples] == [0, 1]
    assert warnings == [f"{path}:3: dropped the last line, cut short (the run was interrupted?)"]
    assert "cut short" in caplog.text


def test_a_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(index=0) + "\n" + _line(index=1))
    assert [s.index for s in read_samples(path)] == [0, 1]


def test_a_broken_last_line_with_its_newline_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(index=0) + "\n" + _line(index=1)[:20] + "\n")
    with pytest.raises(BadInput, match=":2: not valid JSON"):
        read_samples(path)


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(index=0) + "\r\n\n" + _line(index=1) + "\r\n")
    assert [s.index for s in read_samples(path)] == [0, 1]


def test_empty_file_has_no_samples(tmp_path: Path) -> None:
    assert read_samples(_write(tmp_path, "")) == []


def test_unknown_keys_are_ignored_for_forward_compatibility(tmp_path: Path) -> None:
    assert read_samples(_write(tmp_path, _line(shard="1/2") + "\n"))[0].text == "t"


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        read_samples(tmp_path / "absent.jsonl")
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(_line().encode() + b"\n" + b'{"case": "\xe9"}\n')
    with pytest.raises(BadInput, match=":2: not UTF-8"):
        read_samples(path)
