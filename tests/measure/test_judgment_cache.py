from __future__ import annotations

from pathlib import Path

import pytest

from stabilitygate.measure.entailment import Judgment, PairKey
from stabilitygate.measure.judgment_cache import JudgmentCache

KEY = PairKey.of("judge-key", "a", "b")


def test_a_judgment_is_found_under_its_judge_and_ordered_pair(tmp_path: Path) -> None:
    cache = JudgmentCache(tmp_path)
    judgment = Judgment.of_reply("neutral", {"prompt_tokens": 5})
    cache.put(KEY, judgment)
    assert JudgmentCache(tmp_path).get(KEY) == judgment
    assert cache.get(PairKey.of("judge-key", "b", "a")) is None  # the other order is another question
    assert cache.get(PairKey.of("other-judge", "a", "b")) is None
    assert list((tmp_path / "entailment").iterdir()) == [tmp_path / "entailment" / "judge-key"]


def test_the_cache_lives_beside_the_embeddings_and_can_be_off(tmp_path: Path) -> None:
    at = JudgmentCache.at(str(tmp_path))
    assert at is not None and at.root == tmp_path
    assert JudgmentCache.at("off") is None


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    cache = JudgmentCache(tmp_path)
    cache.put(KEY, Judgment.of_reply("entailment"))
    (entry,) = (tmp_path / "entailment").rglob("*.json")
    entry.write_text('{"label": "perhaps", "reply": ""}')
    assert cache.get(KEY) is None
    entry.write_text("not json")
    assert cache.get(KEY) is None


def test_an_unwritable_cache_only_costs_calls(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = JudgmentCache(blocker)  # a directory cannot be made under a file
    cache.put(KEY, Judgment.of_reply("entailment"))
    assert cache.get(KEY) is None
    assert "not writable" in caplog.text
