"""Variants as the run draws them: grouped by name, sized like their case, their samples in a file of their own."""

from __future__ import annotations

from pathlib import Path

from stabilitygate.pipeline.variants import variant_groups, variants_file
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
