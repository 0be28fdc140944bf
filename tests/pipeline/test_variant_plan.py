"""What `plan` says `run --variants` will add: requests, and tokens estimated from each case's own."""

from __future__ import annotations

from stabilitygate.pipeline.variant_plan import VariantCost, price_variants
from tests.support.suites import parse_suite

SUITE = """\
version: 1
name: v
provider: {type: openai, model: m}
variants:
  seeded: {params: {seed: 7}}
cases:
  - {id: a, prompt: p, variants: {strict: {prompt: q}}}
  - {id: b, prompt: p}
"""


def test_each_variant_costs_its_case_requests_and_tokens() -> None:
    loaded = parse_suite(SUITE, "suite.yml")
    cost = price_variants(loaded, {"a": 20, "b": 10}, {"a": 12.5, "b": None})
    assert cost == VariantCost(names=("seeded", "strict"), runs=3, cases=2, requests=50, tokens=500.0)
    assert cost.lines() == [
        "with --variants: 3 variant runs (seeded, strict) over 2 cases, 50 more requests, about 500 tokens "
        "(estimated from each case's own); reported, never judged"
    ]


def test_no_variants_no_price_and_unknown_tokens_are_left_unsaid() -> None:
    plain = parse_suite(SUITE.replace("variants:\n  seeded: {params: {seed: 7}}\n", "").replace(
        ", variants: {strict: {prompt: q}}", ""), "suite.yml")  # fmt: skip
    assert price_variants(plain, {"a": 20, "b": 10}, {}) is None
    cost = price_variants(parse_suite(SUITE, "suite.yml"), {"b": 10}, {"b": None})
    assert (
        cost is not None
        and cost.tokens is None
        and "tokens" not in cost.lines()[0]
        and "over 1 case," in cost.lines()[0]
    )
