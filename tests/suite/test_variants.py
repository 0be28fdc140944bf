"""What the suite checks of its remedies on its own: the probe's fixed size, one key's one completion."""

from __future__ import annotations

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.suite.model import Thresholds
from stabilitygate.suite.variants import idempotency_thresholds, variant_case_id
from tests.support.suites import parse_suite

HEAD = """\
version: 1
name: remedies
provider: {type: openai, model: m}
"""


def test_the_probe_goes_without_a_second_stage_for_the_suite() -> None:
    text = HEAD + "sampling: {samples: 10, max_samples: 20, probe: concurrency}\ncases: [{id: a, prompt: p}]\n"
    with pytest.raises(BadInput, match=r"sampling\.probe: the concurrency probe splits a fixed number") as caught:
        parse_suite(text, "suite.yml")
    assert caught.value.line == 4


def test_the_probe_goes_without_a_second_stage_for_a_case() -> None:
    text = HEAD + "sampling: {samples: 10, probe: concurrency}\ncases:\n  - {id: a, prompt: p, max_samples: 20}\n"
    with pytest.raises(BadInput, match=r"case 'a': max_samples 20 with sampling\.probe") as caught:
        parse_suite(text, "suite.yml")
    assert caught.value.line == 6


def test_a_probe_with_a_fixed_size_loads() -> None:
    text = HEAD + "sampling: {samples: 10, max_samples: 10, probe: concurrency}\ncases: [{id: a, prompt: p}]\n"
    assert parse_suite(text, "suite.yml").suite.sampling.probe == "concurrency"


def test_an_unknown_probe_is_exit_2_at_its_line() -> None:
    text = HEAD + "sampling: {samples: 10, probe: latency}\ncases: [{id: a, prompt: p}]\n"
    with pytest.raises(BadInput, match=r"sampling\.probe: Input should be 'concurrency'") as caught:
        parse_suite(text, "suite.yml")
    assert caught.value.line == 4


def test_shared_keys_expect_one_completion_unless_max_unique_is_set() -> None:
    text = HEAD + (
        "sampling: {samples: 10, idempotency: shared}\nthresholds: {min_mode_share: 0.5}\ncases:\n"
        "  - {id: a, prompt: p}\n  - {id: b, prompt: p, thresholds: {max_unique: 3}}\n"
        "  - {id: c, prompt: p, idempotency: per_sample}\n"
    )
    a, b, c = parse_suite(text, "suite.yml").cases
    assert (a.idempotency, a.thresholds.max_unique, a.thresholds.min_mode_share) == ("shared", 1, 0.5)
    assert (b.idempotency, b.thresholds.max_unique) == ("shared", 3)
    assert (c.idempotency, c.thresholds.max_unique) == ("per_sample", None)


def test_the_idempotency_setting_stays_out_of_the_definition_hash() -> None:
    one = parse_suite(HEAD + "cases: [{id: a, prompt: p}]\n", "suite.yml").cases[0]
    shared = parse_suite(HEAD + "cases: [{id: a, prompt: p, idempotency: shared}]\n", "suite.yml").cases[0]
    assert one.definition_hash == shared.definition_hash


def test_idempotency_thresholds_only_ever_add_max_unique() -> None:
    given = Thresholds(min_agreement=0.9)
    assert idempotency_thresholds(given, "per_sample") is given
    assert idempotency_thresholds(given, "shared") == Thresholds(min_agreement=0.9, max_unique=1)
    assert idempotency_thresholds(Thresholds(max_unique=2), "shared").max_unique == 2


def test_a_variant_case_id_can_never_be_a_case_id() -> None:
    assert variant_case_id("borough", "strict") == "borough@strict"
    with pytest.raises(BadInput, match="String should match pattern"):
        parse_suite(HEAD + "cases: [{id: 'a@b', prompt: p}]\n", "suite.yml")
