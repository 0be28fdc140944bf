from __future__ import annotations

import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_gelu import check_gelu_tables, gelu_tables


def test_the_float64_gelu_tables_are_exact_to_1e_13() -> None:
    assert check_gelu_tables(gelu_tables()) < 1e-13


def test_a_broken_tables_check_is_refused() -> None:
    tables = gelu_tables()
    tables[0, 500] += 1e-9
    with pytest.raises(CannotMeasure, match="GELU is off by"):
        check_gelu_tables(tables)
