"""How live sampling drew each case (its provider, the run's settings) and how that differs from the baseline."""

from __future__ import annotations

from dataclasses import replace

from stabilitygate.conditions import Conditions
from stabilitygate.judge.baseline import Baseline, BaselineCase
from stabilitygate.metrics import Metrics
from stabilitygate.pipeline.conditions import conditions_facts, endpoint_host, run_conditions
from stabilitygate.report.model import CaseResult
from stabilitygate.samples import Sample
from tests.support.suites import parse_suite

SUITE = """\
version: 1
name: c
provider:
  type: openai
  model: m
  base_url: https://user:secret@llm.example.com:8443/v1
  params: {temperature: 0, stream: true, seed: 3}
cases:
  - {id: a, prompt: p, idempotency: shared}
  - {id: b, prompt: p, provider: {type: http, url: "http://app.internal/answer"}}
  - {id: c, prompt: p, provider: {type: command, command: [echo, hi]}}
"""


def test_the_host_never_carries_credentials_and_keeps_its_port() -> None:
    a, b, c = parse_suite(SUITE, "suite.yml").cases
    assert endpoint_host(a.provider) == "llm.example.com:8443"
    assert endpoint_host(b.provider) == "app.internal"
    assert endpoint_host(c.provider) is None


def test_the_conditions_name_what_was_sent_and_what_came_back() -> None:
    a, b, _ = parse_suite(SUITE, "suite.yml").cases
    samples = [Sample(case="a", index=i, text="x", fingerprint=f) for i, f in enumerate(["fp_b", "fp_a", None, "fp_b"])]
    found = run_conditions([a, b], samples, concurrency=8, probe="concurrency")
    assert found["a"] == Conditions(
        provider="openai", host="llm.example.com:8443", concurrency=8, params={"temperature": 0, "seed": 3},
        fingerprints=("fp_a", "fp_b"), idempotency="shared", probe="concurrency",
    )  # fmt: skip
    assert found["b"].provider == "http" and found["b"].fingerprints == ()  # none were sent


def result(case_id: str, verdict: str, unique: int) -> CaseResult:
    return CaseResult(
        id=case_id, verdict=verdict, reasons=(), samples_requested=10, samples_ok=10, sample_errors=0,  # type: ignore[arg-type]
        metrics=Metrics(unique_completions=unique),
    )  # fmt: skip


def test_only_a_baseline_entry_of_the_same_definition_with_conditions_is_compared() -> None:
    cases = parse_suite(SUITE, "suite.yml").cases
    now = run_conditions(cases, [], concurrency=8, probe=None)
    then = {cid: replace(c, concurrency=1) for cid, c in now.items()}
    entry = BaselineCase(hash=cases[0].definition_hash, samples=10, metrics=Metrics(), primary=None)
    baseline = Baseline(
        suite="c",
        cases={
            "a": replace(entry, conditions=then["a"]),
            "b": replace(entry, hash="sha256:other", conditions=then["b"]),
            "c": replace(entry, hash=cases[2].definition_hash),  # an older baseline: no conditions
        },
    )
    results = [result("a", "regressed", 4), result("b", "regressed", 4), result("c", "pass", 1)]
    facts = conditions_facts(results, cases, now, baseline)
    assert facts.cases == now
    assert facts.differ == {"a": ("baseline drawn at concurrency 1, this run at 8",)}
    assert facts.advice == {
        "a": "This run was drawn otherwise than the baseline (baseline drawn at concurrency 1, this run at 8): "
        "re-run at concurrency 1 to tell the server's batching from the model."
    }
    assert conditions_facts(results, cases, now, None).differ == {}
