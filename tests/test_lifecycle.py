"""A suite's everyday life with the embedding cache on (issue 17): the CLI, the library and the Action.

Each test records a baseline and then reruns the suite as a team does, against a scripted OpenAI
server on loopback, with one embedding cache shared by every step of the module. Every process runs
under a hard timeout (tests/support/lifecycle.py), so a gate that hangs fails its test. These load
the real embedding model.
"""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import stabilitygate
from stabilitygate.measure.embedding_cache import text_key
from stabilitygate.pipeline.changed import pick_canaries
from tests.support.lifecycle import (
    API_KEY,
    COMMIT,
    SAMPLING,
    STEP_TIMEOUT_S,
    ActionRunner,
    Life,
    ScriptedModel,
    Step,
    wait_for_lines,
)
from tests.support.openai_server import Distribution

pytestmark = pytest.mark.slow

CAPITAL, PICK, COUNT, CONFIG = "Capital of France?", "A or B?", "How many?", "The config, as JSON."
PARIS, PARIS_TOO = "Paris is the capital of France.", "The capital of France is Paris."
CASES = [
    {"id": "capital", "prompt": CAPITAL},
    {"id": "pick", "prompt": PICK, "answer": {"choice": ["A", "B"]}},
    {"id": "count", "prompt": COUNT, "answer": {"number": True}},
    {"id": "config", "prompt": CONFIG, "answer": {"json": "/x"}},
]
IDS = [c["id"] for c in CASES]
BASELINE: dict[str, Distribution] = {
    CAPITAL: [(PARIS, 8), (PARIS_TOO, 2)],
    PICK: [("The answer is B.", 9), ("B", 1)],
    COUNT: [("42", 7), ("There are 42.", 3)],
    CONFIG: [('{"x": 1}', 10)],
}
BASELINE_TEXTS = [text for dist in BASELINE.values() for text, _ in dist]
# Every completion new, every answer and meaning the same: a pull request that only rewords. Each
# modal completion stays within the 0.95 clustering bar of the baseline's, and no free-text wording
# holds a majority (so no rule sees a changed modal completion).
REWORDED: dict[str, Distribution] = {
    CAPITAL: [
        ("Paris is the capital city of France.", 3),
        ("France's capital is Paris.", 3),
        ("The French capital is Paris.", 2),
        ("The capital city of France is Paris.", 2),
    ],
    PICK: [("The answer is B", 9), ("Answer: B.", 1)],
    COUNT: [("42.", 7), ("There are 42", 3)],
    CONFIG: [('{"x":1}', 10)],
}


def one_new(text: str) -> dict[str, Distribution]:
    """The baseline's answers but one: a single capital completion is `text`, never seen before."""
    return {**BASELINE, CAPITAL: [(PARIS, 8), (PARIS_TOO, 1), (text, 1)]}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedding cache every step of this module shares, as a CI cache would be."""
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel(BASELINE, api_key=API_KEY) as server:
        yield server


@pytest.fixture
def life(tmp_path: Path, cache: Path, model: ScriptedModel) -> Life:
    return Life(tmp_path, cache, model)


@pytest.fixture
def suite(life: Life) -> Path:
    """The suite, with its baseline recorded (which leaves every baseline text in the shared cache)."""
    path = life.write_suite(CASES)
    recorded = life.cli("run", str(path), "--update-baseline", name="baseline")
    assert recorded.code == 0, recorded.log
    assert [c["verdict"] for c in recorded.report["cases"]] == ["new"] * 4
    assert recorded.report["run"]["baseline"]["status"] == "updated"
    assert (path.parent / "suite.baseline.json").exists()
    return path


def modal_answers(report: dict[str, Any]) -> list[Any]:
    return [c["answers"][0]["answer"] for c in report["cases"] if c["answers"]]


def verdicts(step: Step) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in step.report["cases"]}


def assert_whole(step: Step) -> None:
    """Every case ran to its N samples, and no key reached the report."""
    assert [(c["id"], c["samples_ok"]) for c in step.report["cases"]] == [(i, 10) for i in IDS], step.log
    assert API_KEY.encode() not in step.report_bytes and API_KEY not in step.log


# --- the CLI ---------------------------------------------------------------------------------------


def test_a_warm_rerun_loads_no_model_and_reports_what_a_cold_one_does_byte_for_byte(
    life: Life, suite: Path, tmp_path: Path
) -> None:
    cold = life.cli("run", str(suite), cache=tmp_path / "empty-cache", name="cold")
    warm = life.cli("run", str(suite), name="warm")

    assert cold.code == 0 and warm.code == 0, cold.log + warm.log
    assert cold.embedded == (len(BASELINE_TEXTS), 0)
    assert warm.embedded == (0, len(BASELINE_TEXTS))  # every vector from the cache: no model load
    assert verdicts(warm) == dict.fromkeys(IDS, "pass")
    assert_whole(warm)
    assert cold.report_bytes == warm.report_bytes
    assert cold.markdown_bytes == warm.markdown_bytes


def test_one_new_completion_is_embedded_and_the_run_finishes(life: Life, suite: Path, model: ScriptedModel) -> None:
    """Issue 17's hang: a warm cache, one text it lacks (the worker used to wait on itself forever)."""
    model.answer(one_new("Paris is France's capital."))

    step = life.cli("run", str(suite))

    assert step.code == 0, step.log
    assert step.embedded == (1, len(BASELINE_TEXTS))
    assert verdicts(step) == dict.fromkeys(IDS, "pass")
    assert_whole(step)
    assert {"text": "Paris is France's capital.", "count": 1} in step.report["cases"][0]["completions"]
    again = life.cli("run", str(suite))
    assert again.code == 0 and again.embedded == (0, len(BASELINE_TEXTS) + 1)  # the new vector was kept
    assert again.report_bytes == step.report_bytes


def test_every_completion_new_is_embedded_and_judged_the_same(life: Life, suite: Path, model: ScriptedModel) -> None:
    model.answer(REWORDED)

    step = life.cli("run", str(suite))

    assert step.code == 0, step.log
    assert step.embedded[0] == 9  # every new text; the baseline's modal texts come from the cache
    assert verdicts(step) == dict.fromkeys(IDS, "pass")
    assert_whole(step)
    recorded = json.loads((life.reports / "baseline.json").read_text(encoding="utf-8"))
    assert modal_answers(step.report) == modal_answers(recorded) == ["B", 42, "1"]


def test_changed_only_samples_the_changed_case_and_one_canary(life: Life, suite: Path, model: ScriptedModel) -> None:
    edited = [*CASES[:2], {**CASES[2], "prompt": "How many, exactly?"}, CASES[3]]
    life.write_suite(edited, path=suite, sampling={**SAMPLING, "canaries": 1})
    model.answer({**BASELINE, "How many, exactly?": [("Exactly 42.", 10)]})
    (canary,) = pick_canaries(["capital", "pick", "config"], 1, COMMIT)
    before = model.count

    step = life.cli("run", str(suite), "--changed-only")

    assert step.code == 0, step.log
    expected = dict.fromkeys(["capital", "pick", "config"], "unchanged") | {"count": "new", canary: "pass"}
    assert verdicts(step) == expected
    assert model.count - before == 10 + 10  # the changed case and the canary, nothing else
    assert step.report["summary"]["unchanged"] == 2 and step.report["summary"]["requests_saved"] == 20
    assert step.report["run"]["changed_only"] is True
    assert step.embedded[0] == 1  # "Exactly 42." only; the canary's texts are cached


def test_two_shards_and_their_merge_share_one_cache(
    life: Life, suite: Path, model: ScriptedModel, tmp_path: Path
) -> None:
    model.answer(one_new("Paris is France's capital city."))
    shards = []
    for k in (1, 2):  # each shard's samples beside its report, as merge reads them (docs/design.md §15)
        samples = life.reports / f"shard{k}.jsonl"
        shards.append(life.cli("run", str(suite), "--shard", f"{k}/2", "--samples-out", str(samples), name=f"s{k}"))

    merged = life.cli("merge", str(shards[0].report_path), str(shards[1].report_path), "--suite", str(suite))
    scored = life.cli("score", *(str(life.reports / f"shard{k}.jsonl") for k in (1, 2)), "--suite", str(suite))

    assert [s.code for s in shards] == [0, 0], shards[0].log + shards[1].log
    assert sorted(c["id"] for s in shards for c in s.report["cases"]) == sorted(IDS)
    assert sum(s.embedded[0] for s in shards) == 1  # the one new text, by whichever shard drew it
    assert merged.code == 0 and scored.code == 0, merged.log + scored.log
    assert merged.embedded == (0, len(BASELINE_TEXTS) + 1)  # the shards left every vector in the cache
    assert verdicts(merged) == dict.fromkeys(IDS, "pass")
    assert_whole(merged)
    assert merged.report["cases"] == scored.report["cases"]  # judged together, as one run


def test_an_interrupted_run_is_finished_by_score(life: Life, suite: Path, model: ScriptedModel, tmp_path: Path) -> None:
    samples, report = tmp_path / "interrupted.jsonl", tmp_path / "interrupted.json"
    model.hold_after(20)  # five rounds of the four cases answered, then nothing
    run = life.start_cli("run", str(suite), "--no-progress", "--samples-out", str(samples), report=report)
    try:
        wait_for_lines(samples, 20, run)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=STEP_TIMEOUT_S)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        model.release()

    assert run.returncode == 3, err
    assert "interrupted" in err and "Traceback" not in err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["run"]["sampling"]["interrupted"] is True and data["verdict"] == "error"
    lines = samples.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 20
    finished = life.cli("score", str(samples), "--suite", str(suite))
    assert finished.code == 0, finished.log
    assert sum(c["samples_ok"] for c in finished.report["cases"]) == 20
    assert set(verdicts(finished).values()) == {"pass"}
    assert finished.embedded[0] == 0


def cache_warnings(step: Step) -> list[str]:
    """The log's warnings about damaged cache entries (the test's own path also holds "damaged")."""
    return [
        line
        for line in step.stderr.splitlines()
        if line.startswith("stabilitygate: embedding cache") and "damaged" in line
    ]


def test_a_damaged_cache_entry_is_never_trusted(life: Life, suite: Path, tmp_path: Path) -> None:
    private = tmp_path / "damaged-cache"
    shutil.copytree(life.cache, private)
    garbled, truncated = entry(private, PARIS), entry(private, "The answer is B.")
    blob = bytearray(garbled.read_bytes())
    blob[-8:] = bytes(8)  # the same length, two components changed: only a checksum can tell
    garbled.write_bytes(bytes(blob))
    truncated.write_bytes(truncated.read_bytes()[:100])

    damaged = life.cli("run", str(suite), cache=private, name="damaged")
    healthy = life.cli("run", str(suite), name="healthy")
    repaired = life.cli("run", str(suite), cache=private, name="repaired")

    assert damaged.code == 0, damaged.log
    assert damaged.embedded == (2, len(BASELINE_TEXTS) - 2)  # both damaged entries re-embedded
    assert len(cache_warnings(damaged)) == 1, damaged.stderr
    assert damaged.report_bytes == healthy.report_bytes  # no damaged vector reached a number
    assert repaired.embedded == (0, len(BASELINE_TEXTS)) and cache_warnings(repaired) == []


def test_a_cache_that_cannot_be_written_is_one_warning_and_the_run_goes_on(
    life: Life, suite: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache should be", encoding="utf-8")  # unwritable even for root

    step = life.cli("run", str(suite), cache=blocked, name="blocked")
    healthy = life.cli("run", str(suite), name="healthy")

    assert step.code == 0, step.log
    assert step.embedded == (len(BASELINE_TEXTS), 0)
    assert len([line for line in step.stderr.splitlines() if "not writable" in line]) == 1, step.stderr
    assert step.report_bytes == healthy.report_bytes


def entry(cache: Path, text: str) -> Path:
    """The cache file of `text`, under the one embedding model this module uses."""
    key = text_key(text)
    (path,) = cache.glob(f"*/{key[:2]}/{key}.f32")
    return path


# --- the library -------------------------------------------------------------------------------------


@pytest.mark.timeout(STEP_TIMEOUT_S * 2)  # in-process: a hang fails this test through pytest-timeout
def test_the_library_through_the_same_life(life: Life, model: ScriptedModel, tmp_path: Path) -> None:
    suite = life.write_suite(CASES, path=tmp_path / "lib" / "suite.yml")
    env, cache = life.env(), life.cache
    samples = tmp_path / "lib" / "samples.jsonl"

    recorded = stabilitygate.run(suite, update_baseline=True, environ=env, embedding_cache=cache)
    unchanged = stabilitygate.run(suite, environ=env, embedding_cache=cache)
    model.answer(one_new("France has Paris as its capital."))
    one = stabilitygate.run(suite, environ=env, embedding_cache=cache, samples_out=samples)
    scored = stabilitygate.score([samples], suite=suite, embedding_cache=cache)

    assert recorded.exit_code == 0 and recorded.run.baseline.status == "updated"
    facts = unchanged.run.embedding
    assert facts is not None and facts.texts_from_cache == facts.texts_embedded == len(BASELINE_TEXTS)
    assert unchanged.exit_code == 0 and {c.verdict for c in unchanged.cases} == {"pass"}
    facts = one.run.embedding
    assert facts is not None and facts.texts_embedded - (facts.texts_from_cache or 0) == 1
    assert one.exit_code == 0 and {c.verdict for c in one.cases} == {"pass"}
    assert scored.exit_code == 0 and scored.run.embedding is not None
    assert scored.run.embedding.texts_from_cache == scored.run.embedding.texts_embedded  # all cached by now
    # One text embedded by the model there, none here: the same cases, number for number.
    assert scored.to_dict()["cases"] == one.to_dict()["cases"]


# --- the Action ----------------------------------------------------------------------------------------


def test_the_action_through_the_same_life(life: Life, model: ScriptedModel, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    life.write_suite(CASES, path=workspace / ".stability" / "suite.yml")
    action = ActionRunner(life, workspace)

    recorded = action.run(**{"update-baseline": "true"})
    unchanged = action.run()
    model.answer(one_new("Paris is the capital of the French Republic."))
    one = action.run()

    assert recorded.code == 0, recorded.log
    assert (workspace / ".stability" / "suite.baseline.json").exists()
    assert unchanged.code == 0 and unchanged.outputs["verdict"] == "pass", unchanged.log
    assert f"{len(BASELINE_TEXTS)} of {len(BASELINE_TEXTS)} distinct texts came from the cache" in unchanged.summary
    assert "no model was loaded" in unchanged.summary
    assert one.code == 0 and one.outputs["verdict"] == "pass", one.log
    assert "1 embedded by the model" in one.summary
    masked = [line for line in one.log.splitlines() if API_KEY in line]
    assert all(line == f"::add-mask::{API_KEY}" for line in masked)  # only ever handed to the runner to mask
    assert API_KEY not in one.summary and API_KEY.encode() not in one.report_bytes
