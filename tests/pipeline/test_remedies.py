"""Remedies end to end through `stabilitygate`: variants, one idempotency key, the concurrency probe and
the run's conditions, against real loopback servers (docs/design.md §16)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from stabilitygate.cli import main
from tests.pipeline.conftest import RunCli, write_suite
from tests.support.app_server import AnswerApp
from tests.support.batching_server import BatchingOpenAI
from tests.support.openai_server import Fault, ScriptedOpenAI

LETTER = "Pick A or B."
STRICT = "Pick A or B. Reply with the letter A only."
SUM = "What is 7 x 6?"
#: Alone the engine says "42"; a batch of several computes each request a little differently.
BATCHED = {SUM: ("42", ["42.", "forty-two", "The answer is 42", "42!"])}


def case(**fields: Any) -> dict[str, Any]:
    return {"id": "letter", "prompt": LETTER, "answer": {"choice": ["A", "B"]}, **fields}


def by_id(report: dict[str, Any], case_id: str) -> dict[str, Any]:
    return next(c for c in report["cases"] if c["id"] == case_id)


# --- variants --------------------------------------------------------------------------------------


@pytest.fixture
def letters() -> Any:
    script = {LETTER: [("The answer is A.", 6), ("The answer is B.", 4)], STRICT: [("A", 1)]}
    with ScriptedOpenAI(script) as server:
        yield server


def variants_suite(tmp_path: Path, base_url: str) -> Path:
    variants = {
        "strict": {"prompt": STRICT},
        "seeded": {"params": {"seed": 7}},
        "unreachable": {"provider": {"base_url": "http://127.0.0.1:9/v1"}},
        "keyless": {"provider": {"api_key_env": "STABILITYGATE_TEST_UNSET_KEY"}},
    }
    suite = write_suite(tmp_path, base_url, [case(variants=variants)])
    text = suite.read_text().replace("samples: 10\n", "samples: 20\n").replace("retries: 3", "retries: 0")
    suite.write_text(text)
    return suite


def test_variants_are_measured_beside_the_case_and_never_touch_its_verdict(
    tmp_path: Path, run_cli: RunCli, letters: ScriptedOpenAI
) -> None:
    suite = variants_suite(tmp_path, letters.base_url)
    plain_code, plain = run_cli("run", str(suite), "--no-progress")
    code, report = run_cli("run", str(suite), "--no-progress", "--variants", "--markdown", str(tmp_path / "r.md"))
    assert plain is not None and report is not None
    assert code == plain_code == 0 and report["verdict"] == plain["verdict"] == "pass"
    mine, before = by_id(report, "letter"), by_id(plain, "letter")
    assert (mine["verdict"], mine["reasons"], mine["metrics"]) == (
        before["verdict"],
        before["reasons"],
        before["metrics"],
    )
    assert "variants" not in before
    strict, seeded, unreachable, keyless = mine["variants"]
    assert (strict["name"], strict["overrides"], strict["samples_ok"]) == ("strict", ["prompt"], 20)
    assert strict["primary"] == {"metric": "parsed_agreement", "k": 20, "n": 20} and strict["answers"] == 1
    assert strict["change"] == "better" and strict["significant"] is True and strict["p_holm"] < 0.05
    assert strict["unique_completions"] == 1 and strict["tokens"] == 20 * (len(STRICT.split()) + 1)
    assert seeded["primary"] == {"metric": "parsed_agreement", "k": 12, "n": 20} and seeded["change"] == "same"
    assert seeded["significant"] is False
    assert unreachable["error"].startswith("20 of 20 samples failed, all with: connect:")
    assert unreachable["primary"] is None
    assert "STABILITYGATE_TEST_UNSET_KEY" in keyless["error"] and keyless["samples_ok"] == 0
    sent = [r.body for r in letters.requests if r.body["messages"][-1]["content"] == LETTER]
    assert sum(1 for body in sent if body.get("seed") == 7) == 20  # the variant's params reached the server
    assert "measured with variant 'strict': 1 answer in 20, agreement 20/20" in mine["diagnostics"]["diagnosis"]
    markdown = (tmp_path / "r.md").read_text()
    assert "🧪 Variants: 4 measured beside 1 case, 1 significantly better than as written" in markdown
    assert "| letter | as written | 2 | 0.60 | — | — | 'A' 12/20 |" in markdown  # no `expected`: no accuracy
    assert "| strict (prompt) | 1 | 1.00 | — | — | 'A' 20/20 |" in markdown
    assert "agreement 20/20 against 12/20: better" in markdown
    assert (strict["modal"], strict["modal_count"], "accuracy" in strict) == ("A", 20, False)


def test_variants_never_enter_the_baseline_or_the_samples_file(
    tmp_path: Path, run_cli: RunCli, letters: ScriptedOpenAI
) -> None:
    suite = variants_suite(tmp_path, letters.base_url)
    samples = tmp_path / "run.jsonl"
    code, _ = run_cli("run", str(suite), "--update-baseline", "--variants", "--samples-out", str(samples))
    assert code == 0
    baseline = json.loads((tmp_path / "suite.baseline.json").read_text())
    assert list(baseline["cases"]) == ["letter"]
    own = [json.loads(line)["case"] for line in samples.read_text().splitlines()]
    assert set(own) == {"letter"} and len(own) == 20
    drawn = [json.loads(line)["case"] for line in (tmp_path / "run.variants.jsonl").read_text().splitlines()]
    assert {c: drawn.count(c) for c in set(drawn)} == {f"letter@{v}": 20 for v in ("strict", "seeded", "unreachable")}
    # Scoring the samples file judges the run as before, with no variant in sight.
    code, scored = run_cli("score", str(samples), "--suite", str(suite))
    assert code == 0 and scored is not None and "variants" not in by_id(scored, "letter")


def test_plan_prices_the_variants(tmp_path: Path, letters: ScriptedOpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    suite = variants_suite(tmp_path, letters.base_url)
    assert main(["plan", str(suite)]) == 0
    out = capsys.readouterr().out
    assert "with --variants: 4 variant runs (strict, seeded, unreachable, keyless) over 1 case, 80 more requests" in out


# --- one idempotency key ---------------------------------------------------------------------------


def app_suite(tmp_path: Path, app: AnswerApp, **provider: Any) -> Path:
    own = provider or {
        "type": "http",
        "url": app.url("/v1/answer"),
        "headers": {"Idempotency-Key": "${idempotency_key}"},
        "body": '{"question": {{ prompt|tojson }}}',
        "completion_pointer": "/data/answer",
    }
    cases = [{"id": "ask", "prompt": "Where was Feynman born?", "idempotency": "shared", "provider": own}]
    return write_suite(tmp_path, app.url("/v1"), cases)


@pytest.mark.parametrize("route", ["http", "openai"])
def test_an_application_with_a_cache_is_idempotent_for_one_key(tmp_path: Path, run_cli: RunCli, route: str) -> None:
    with AnswerApp() as app:
        openai = {"type": "openai", "model": "m", "base_url": app.url("/v1")}
        suite = app_suite(tmp_path, app, **(openai if route == "openai" else {}))
        code, report = run_cli("run", str(suite), "--no-progress")
        keys = {r.headers["idempotency-key"] for r in app.requests}
        assert (app.misses, app.hits) == (1, 9)
    assert code == 0 and report is not None and len(keys) == 1
    ask = by_id(report, "ask")
    assert ask["metrics"]["unique_completions"] == 1 and ask["diagnostics"]["idempotent"] is True
    assert "idempotent: yes, 1 distinct completion for one key" in ask["notes"]
    assert report["run"]["conditions"]["cases"]["ask"]["idempotency"] == "shared"


@pytest.mark.parametrize("route", ["http", "openai"])
def test_an_application_without_a_cache_is_not_idempotent(tmp_path: Path, run_cli: RunCli, route: str) -> None:
    with AnswerApp(cache=False) as app:
        openai = {"type": "openai", "model": "m", "base_url": app.url("/v1")}
        suite = app_suite(tmp_path, app, **(openai if route == "openai" else {}))
        code, report = run_cli("run", str(suite), "--no-progress", "--no-early-stop")
    assert report is not None and code == 1  # one key expects one completion: max_unique 1
    ask = by_id(report, "ask")
    assert ask["verdict"] == "fail" and ask["metrics"]["unique_completions"] == 10
    assert ask["diagnostics"]["idempotent"] is False
    assert "idempotent: no, 10 distinct completions for one key" in ask["notes"]
    assert ask["diagnostics"]["diagnosis"].startswith("not idempotent: 10 distinct completions for one key")


def test_one_key_per_sample_defeats_the_cache(tmp_path: Path, run_cli: RunCli) -> None:
    with AnswerApp() as app:
        suite = app_suite(tmp_path, app)
        suite.write_text(suite.read_text().replace("idempotency: shared", "idempotency: per_sample"))
        code, report = run_cli("run", str(suite), "--no-progress")
        assert (app.misses, app.hits) == (10, 0)
    assert code == 0 and report is not None
    ask = by_id(report, "ask")
    assert ask["metrics"]["unique_completions"] == 10 and "idempotent" not in ask["diagnostics"]


# --- the concurrency probe ---------------------------------------------------------------------------


def probe_suite(tmp_path: Path, base_url: str, samples: int = 10) -> Path:
    suite = write_suite(tmp_path, base_url, [{"id": "sum", "prompt": SUM}])
    text = suite.read_text().replace("concurrency: 4", "concurrency: 8\n  probe: concurrency")
    suite.write_text(text.replace("samples: 10\n", f"samples: {samples}\n"))
    return suite


def test_the_probe_finds_answers_that_depend_on_concurrency(tmp_path: Path, run_cli: RunCli) -> None:
    samples = tmp_path / "run.jsonl"
    with BatchingOpenAI(BATCHED, slots=5) as server:
        suite = probe_suite(tmp_path, server.base_url)
        code, report = run_cli("run", str(suite), "--samples-out", str(samples), "--markdown", str(tmp_path / "r.md"))
        batches = server.batches
    assert batches == [1, 1, 1, 1, 1, 5]  # the first half one at a time, then the rest together
    assert code == 0 and report is not None  # reported, never failing the gate
    probe = by_id(report, "sum")["probe"]
    assert (probe["alone"], probe["alone_distinct"], probe["under_load"], probe["under_load_distinct"]) == (5, 1, 5, 4)
    assert (probe["modal_alone"], probe["modal_under_load"]) == (5, 0)
    assert probe["depends"] is True and probe["p_holm"] < 0.01
    diagnostics = by_id(report, "sum")["diagnostics"]
    assert diagnostics["diagnosis"].startswith(
        "answers depend on concurrency (server-side batching): 1 distinct completion alone, 4 under load"
    )
    assert "run the case at concurrency 1, or serve it with batch-invariant kernels" in diagnostics["suggestion"]
    assert "- Concurrency probe: answers depend on concurrency" in (tmp_path / "r.md").read_text()
    # The halves are read back from the sample indices: scoring the file gives the same probe.
    code, scored = run_cli("score", str(samples), "--suite", str(suite))
    assert code == 0 and scored is not None
    assert by_id(scored, "sum")["probe"] == probe


def test_the_probe_sees_no_dependence_where_there_is_none(tmp_path: Path, run_cli: RunCli) -> None:
    # The first two requests of the second half wait for each other: they are in flight together.
    together = threading.Barrier(2, timeout=30)

    def meet(body: object, number: int) -> bool:
        if number in (11, 12):
            together.wait()
        return False

    with ScriptedOpenAI({SUM: [("42", 7), ("41", 3)]}, faults=[Fault("status", when=meet)]) as server:
        code, report = run_cli("run", str(probe_suite(tmp_path, server.base_url, samples=20)), "--no-progress")
        assert server.max_in_flight > 1  # the second half was drawn under load
    assert code == 0 and report is not None
    probe = by_id(report, "sum")["probe"]
    assert (probe["modal_alone"], probe["modal_under_load"]) == (7, 7) and probe["depends"] is False
    assert probe["p_holm"] > 0.5
    assert not by_id(report, "sum")["diagnostics"]["diagnosis"].startswith("answers depend on concurrency")


# --- the conditions of a run ---------------------------------------------------------------------------


def test_a_regression_drawn_at_another_concurrency_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    """The llama-server scenario: a baseline one request at a time, a pull request at concurrency 8."""
    with BatchingOpenAI(BATCHED, slots=8) as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "sum", "prompt": SUM}])
        code, _ = run_cli("run", str(suite), "--update-baseline", "--concurrency", "1")
        assert code == 0
        code, report = run_cli("run", str(suite), "--concurrency", "8", "--markdown", str(tmp_path / "r.md"))
    recorded = json.loads((tmp_path / "suite.baseline.json").read_text())["cases"]["sum"]["conditions"]
    assert recorded == {
        "concurrency": 1,
        "fingerprints": ["fp_scripted"],
        "host": server.base_url.removeprefix("http://").removesuffix("/v1"),
        "params": {"temperature": 0},
        "provider": "openai",
    }
    assert code == 1 and report is not None
    assert by_id(report, "sum")["verdict"] == "regressed" and "conditions" not in by_id(report, "sum")
    conditions = report["run"]["conditions"]
    assert conditions["cases"]["sum"] == {**recorded, "concurrency": 8}
    assert conditions["differ"] == {"sum": ["baseline drawn at concurrency 1, this run at 8"]}
    assert "re-run at concurrency 1 to tell the server's batching from the model" in conditions["advice"]["sum"]
    markdown = (tmp_path / "r.md").read_text()
    table_row = next(line for line in markdown.splitlines() if line.startswith("| sum |"))
    assert "📉 regressed" in table_row and "baseline drawn at concurrency 1, this run at 8" in table_row
    assert "- Drawn otherwise than the baseline: baseline drawn at concurrency 1, this run at 8." in markdown
    assert "- Suggestion: This run was drawn otherwise than the baseline (baseline drawn at concurrency 1" in markdown


def test_the_same_conditions_say_nothing_and_an_older_baseline_is_still_read(tmp_path: Path, run_cli: RunCli) -> None:
    with ScriptedOpenAI({SUM: "42"}) as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "sum", "prompt": SUM}])
        assert run_cli("run", str(suite), "--update-baseline")[0] == 0
        code, report = run_cli("run", str(suite))
        assert code == 0 and report is not None and report["run"]["conditions"]["differ"] == {}
        path = tmp_path / "suite.baseline.json"
        older = json.loads(path.read_text())
        del older["cases"]["sum"]["conditions"]
        path.write_text(json.dumps(older))
        code, report = run_cli("run", str(suite), "--concurrency", "2")
    assert code == 0 and report is not None
    assert by_id(report, "sum")["verdict"] == "pass" and report["run"]["conditions"]["differ"] == {}
    assert report["run"]["conditions"]["cases"]["sum"]["concurrency"] == 2


def test_scored_and_merged_runs_know_no_conditions_and_score_like_the_run(tmp_path: Path, run_cli: RunCli) -> None:
    samples = tmp_path / "run.jsonl"
    with ScriptedOpenAI({SUM: [("42", 3), ("41", 1)]}) as server:
        suite = write_suite(tmp_path, server.base_url, [{"id": "sum", "prompt": SUM}])
        code, live = run_cli("run", str(suite), "--samples-out", str(samples))
    code_s, scored = run_cli("score", str(samples), "--suite", str(suite))
    assert code == code_s == 0 and live is not None and scored is not None
    assert "conditions" in live["run"] and "conditions" not in scored["run"]
    assert scored["cases"] == live["cases"]  # what only live sampling knows stays out of the cases


def test_the_comment_details_carry_the_diagnosis_the_suggestion_and_the_split(
    tmp_path: Path, run_cli: RunCli, letters: ScriptedOpenAI
) -> None:
    """Before, the suggestion and the near-tie lived only in report.json, and the near-tie pointed at
    the closest call (token 1 here: every margin is equal) where the texts split at token 4."""
    logprobs = {"logprobs": True, "top_logprobs": 2}
    suite = write_suite(tmp_path, letters.base_url, [case(provider={"params": logprobs})])
    code, report = run_cli("run", str(suite), "--no-progress", "--markdown", str(tmp_path / "r.md"))
    assert code == 0 and report is not None
    diagnostics = by_id(report, "letter")["diagnostics"]
    assert diagnostics["min_margin_position"] == 1 and diagnostics["divergence_at_min_margin"] is False
    assert (diagnostics["split_position"], diagnostics["split_token"], diagnostics["split_runner_up"]) == (
        4,
        " A",
        " AX",
    )
    markdown = (tmp_path / "r.md").read_text()
    assert (
        "- Diagnosis: the decision itself varies: 2 answers, the most frequent in 6 of 10: consider an enum of the "
        "labels, or a less ambiguous prompt; the texts split at token 4: ' A' over ' AX', logprob margin 2.5."
        in markdown
    )
    assert "- Suggestion: The answer itself varies: 2 different answers" in markdown
    assert (
        "The texts split at token 4: ' A' over ' AX', logprob margin 2.5; the closest call elsewhere is token 1"
        in markdown
    )
