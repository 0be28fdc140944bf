"""How two runs' conditions differ, in the sentences the comment shows beside a regression."""

from __future__ import annotations

from dataclasses import replace

from stabilitygate.conditions import Conditions, differences
from stabilitygate.typed_json import from_json, to_json

BASELINE = Conditions(
    provider="openai", host="127.0.0.1:8080", concurrency=1, params={"temperature": 0}, fingerprints=("fp_a",)
)


def test_the_same_conditions_or_a_missing_record_say_nothing() -> None:
    assert differences(BASELINE, BASELINE) == ()
    assert differences(None, BASELINE) == () and differences(BASELINE, None) == ()


def test_each_difference_is_one_sentence() -> None:
    now = Conditions(
        provider="http",
        host="10.0.0.5:8000",
        concurrency=8,
        params={"temperature": 0, "seed": 7},
        fingerprints=(),
        idempotency="shared",
        probe="concurrency",
    )
    assert differences(BASELINE, now) == (
        "baseline drawn at concurrency 1, this run at 8",
        "baseline drawn with provider openai, this run with http",
        "baseline drawn from host 127.0.0.1:8080, this run from host 10.0.0.5:8000",
        'baseline sent params {"temperature":0}, this run {"seed":7,"temperature":0}',
        "the baseline's server sent system_fingerprint fp_a, this run's no system_fingerprint",
        "baseline keyed one idempotency key per sample, this run one idempotency key for all samples",
        "baseline drawn all under the run's concurrency, this run half alone and half under load (sampling.probe)",
    )


def test_fingerprints_compare_as_sets_and_an_unknown_concurrency_is_no_difference() -> None:
    again = Conditions(provider="openai", host="127.0.0.1:8080", params={"temperature": 0}, fingerprints=("fp_a",))
    assert differences(BASELINE, again) == ()  # a merged run may not know its concurrency
    more = replace(BASELINE, fingerprints=("fp_a", "fp_b"))
    assert differences(BASELINE, more) == (
        "the baseline's server sent system_fingerprint fp_a, this run's system_fingerprints fp_a, fp_b",
    )


def test_the_record_is_plain_json_with_the_default_keys_left_out() -> None:
    assert to_json(BASELINE) == {
        "provider": "openai",
        "host": "127.0.0.1:8080",
        "concurrency": 1,
        "params": {"temperature": 0},
        "fingerprints": ["fp_a"],
    }
    assert from_json(Conditions, to_json(BASELINE), what="conditions", source=None) == BASELINE
