"""The conditions a case's samples were drawn under, from its provider and the run's sampling facts."""

from __future__ import annotations

from stabilitygate.cases import parse_suite
from stabilitygate.pipeline.conditions import conditions_of, endpoint_host, with_conditions
from stabilitygate.report.model import SamplingFacts
from stabilitygate.results import CaseMeasurement, FingerprintCount

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
    a = parse_suite(SUITE, "suite.yml").cases[0]
    m = CaseMeasurement(
        "a",
        10,
        10,
        0,
        fingerprints=(FingerprintCount("fp_b", 6), FingerprintCount("fp_a", 3), FingerprintCount(None, 1)),
    )
    found = conditions_of(a, m, concurrency=8, probe=None)
    assert found.provider == "openai" and found.concurrency == 8 and found.idempotency == "shared"
    assert found.params == {"temperature": 0, "seed": 3}  # `stream` is never sent
    assert found.fingerprints == ("fp_a", "fp_b")


def test_only_a_run_with_sampling_facts_records_conditions() -> None:
    a = parse_suite(SUITE, "suite.yml").cases[0]
    m = CaseMeasurement.nothing("a", 10)
    assert with_conditions(m, a, None, None) is m  # a scored run does not know how its samples were drawn
    live = SamplingFacts(requests=10, retries=0, interrupted=False, budget_exhausted=False, concurrency=2)
    recorded = with_conditions(m, a, live, "concurrency").conditions
    assert recorded is not None and recorded.concurrency == 2 and recorded.probe == "concurrency"
