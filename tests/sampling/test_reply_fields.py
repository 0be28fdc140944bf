"""A reply's usage, labels and names, checked where they enter the run (issue 37, item 4)."""

from __future__ import annotations

import pytest

from stabilitygate.providers.interface import ProviderError
from stabilitygate.samples import MAX_TOKEN_COUNT
from stabilitygate.sampling.reply_fields import bounded, checked_usage


@pytest.mark.parametrize(
    ("usage", "why"),
    [
        ({"prompt_tokens": 10**150}, "prompt_tokens is more than 1,000,000,000"),
        ({"completion_tokens": -5}, "completion_tokens is negative"),
        ({"prompt_tokens": True}, "prompt_tokens is a bool"),
        ({"prompt_tokens": 2.5}, "prompt_tokens is a float"),
        ({f"k{i}": 1 for i in range(17)}, "has 17 counts"),
        ({"k" * 201: 1}, "names a count of 201 characters"),
    ],
    ids=["huge", "negative", "boolean", "fraction", "too-many", "long-key"],
)
def test_a_usage_out_of_bounds_fails_the_sample_with_its_cause(usage: dict[str, object], why: str) -> None:
    with pytest.raises(ProviderError) as caught:
        checked_usage(usage)
    assert why in str(caught.value) and caught.value.kind == "bad_reply" and not caught.value.retryable


def test_a_usage_within_bounds_passes_whole() -> None:
    usage = {"prompt_tokens": 0, "completion_tokens": MAX_TOKEN_COUNT}
    assert checked_usage(usage) == usage and checked_usage(None) is None


def test_a_label_is_redacted_then_cut() -> None:
    hide = lambda text: text.replace("sk-secret-key", "***")  # noqa: E731
    assert bounded("x" * 60 + "sk-secret-key", 64, hide) == "x" * 60 + "***"  # cut first, the key would stay
    assert bounded("y" * 100, 64, hide) == "y" * 63 + "…"
    assert bounded(None, 64, hide) is None
