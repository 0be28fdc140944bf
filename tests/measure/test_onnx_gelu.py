from __future__ import annotations

import numpy as np
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


def test_the_tables_are_those_of_one_fit_per_piece() -> None:
    from numpy.polynomial import chebyshev

    from stabilitygate.measure.onnx_gelu import GELU_DEGREE, GELU_LIMIT, GELU_PIECES, exact_gelu

    tables = gelu_tables()
    width = GELU_LIMIT / GELU_PIECES
    nodes = np.cos(np.pi * (np.arange(GELU_DEGREE + 1) + 0.5) / (GELU_DEGREE + 1))
    for piece in (0, 1, 1234, GELU_PIECES - 1):
        values = [exact_gelu(-(piece * width + (float(s) + 1.0) * width / 2.0)) for s in nodes]
        alone = chebyshev.cheb2poly(chebyshev.chebfit(nodes, values, GELU_DEGREE))
        assert np.array_equal(tables[: len(alone), piece], alone)  # the same numbers, bit for bit
