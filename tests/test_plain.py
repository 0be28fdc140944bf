"""plain(): the JSON leaves of every file the gate writes, and a TypeError for what JSON has no form for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.plain import plain
from stabilitygate.typed_json import to_json


def test_json_values_come_back_rounded_and_sorted_where_order_is_arbitrary() -> None:
    assert plain({"a": (1, 2.1234567, None, True), 3: {"x"}}) == {"a": [1, 2.123457, None, True], "3": ["x"]}
    assert plain(float("nan")) is None and plain(float("-inf")) is None
    assert plain(np.int64(3)) == 3 and plain(np.bool_(True)) is True and plain(np.float32(0.5)) == 0.5
    assert plain({frozenset({2, 1})}) == [[1, 2]]


@dataclass(frozen=True)
class Holder:
    where: object


@pytest.mark.parametrize("value", [Path("suite.yml"), object(), b"bytes", np.zeros(2), 1j])
def test_a_value_json_has_no_form_for_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="no JSON form for a"):
        plain(value)
    with pytest.raises(TypeError, match="no JSON form for a"):
        to_json(Holder(value))
