"""Variants as the run draws them: grouped by name, sized like their case, each drawn alone with a budget of
its own, their samples in a file of their own."""

from __future__ import annotations

from pathlib import Path

from stabilitygate.pipeline.variants import variant_groups, variants_file
from tests.pipeline.conftest import RunCli, write_suite
from tests.support.openai_server import Fault, ScriptedOpenAI
from tests.support.suites import parse_suite

SUITE = """\
version: 1
name: v
provider: {type: openai, model: m}
sampling: {samples: 10}
variants:
  seeded: {params: {seed: 7}}
cases:
  - {id: a, prompt: p, variants: {strict: {prompt: q}}}
  - {id: b, prompt: p, samples: 4}
"""


def test_variants_are_grouped_by_name_in_file_order_and_drawn_as_often_as_their_case() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    a, b = loaded.cases
    groups = variant_groups(loaded, [a.model_copy(update={"samples": 6}), b])
    assert list(groups) == ["seeded", "strict"]
    assert [(v.case.id, v.case.samples) for v in groups["seeded"]] == [("a@seeded", 6), ("b@seeded", 4)]
    assert [(v.case.id, v.case.samples) for v in groups["strict"]] == [("a@strict", 6)]
    assert variant_groups(loaded, [b]) == {"seeded": [groups["seeded"][1]]}


def test_the_variants_samples_file_sits_beside_the_samples_file() -> None:
    assert variants_file(Path("out/run.jsonl")) == Path("out/run.variants.jsonl")
    assert variants_file(Path("samples")) == Path("samples.variants.jsonl")
    assert variants_file(None) is None


REFUSAL = '{"error": {"message": "Input should be \'text\' or \'json_object\'", "type": "server_error"}}'


def test_each_variant_of_each_case_has_a_budget_and_a_cause_of_its_own(tmp_path: Path, run_cli: RunCli) -> None:
    """One variant name over two cases: the one whose server refuses every request (HTTP 500, retried)
    spends its own budget, says why, and leaves the other case's variant all its samples."""
    script = {"A?": [("A", 1)], "B?": [("B", 1)], "A, strictly?": [("A", 1)], "B, strictly?": [("B", 1)]}
    refuse = Fault("status", status=500, prompt="A, strictly?", body=REFUSAL, retry_after="0")
    with ScriptedOpenAI(script, faults=[refuse]) as server:
        cases = [
            {"id": "a", "prompt": "A?", "answer": {"choice": ["A", "B"]}, "expected": "A",
             "variants": {"strict": {"prompt": "A, strictly?"}}},
            {"id": "b", "prompt": "B?", "answer": {"choice": ["A", "B"]}, "expected": "A",
             "variants": {"strict": {"prompt": "B, strictly?"}}},
        ]  # fmt: skip
        suite = write_suite(tmp_path, server.base_url, cases)
        text = suite.read_text().replace("retries: 3", "retries: 9").replace("concurrency: 4", "concurrency: 1")
        suite.write_text(text)
        code, report = run_cli("run", str(suite), "--no-progress", "--variants")
    assert code == 0 and report is not None  # every case new: nothing to fail
    (a_strict,) = next(c for c in report["cases"] if c["id"] == "a")["variants"]
    (b_strict,) = next(c for c in report["cases"] if c["id"] == "b")["variants"]
    assert (b_strict["samples_ok"], b_strict["sample_errors"], "error" in b_strict) == (10, 0, False)
    assert (b_strict["accuracy"], b_strict["modal"], b_strict["modal_count"]) == (0.0, "B", 10)
    assert a_strict["samples_ok"] == 0 and a_strict["sample_errors"] == 3  # 3 samples x 10 attempts: its budget
    assert a_strict["error"].startswith("3 of 10 samples failed, all with: http_500: HTTP 500 from ")
    assert "Input should be 'text' or 'json_object'" in a_strict["error"]
    assert a_strict["error"].endswith("; the request budget ran out before every sample was drawn")
