"""A float64 GELU that onnxruntime can run: the exact function as a piecewise polynomial.

onnxruntime has no float64 kernel for Erf, the heart of the exact GELU, so the graph computes every
GELU of the model as a piecewise polynomial of it (within GELU_TOLERANCE of the exact function), made
of operators that do run in float64 (Gather, Floor, Mul, Add, Relu; measure/onnx_graph.py writes
them). The tables are checked against math.erfc before any graph is built with them.
"""

from __future__ import annotations

import math

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.model_files import DEFAULT_MODEL

# GELU(x) = max(x, 0) + GELU(-|x|), and GELU(-a) for a in [0, 8] is a piecewise polynomial: degree
# GELU_DEGREE on each of GELU_PIECES equal pieces; beyond 8 it is 0 to within 5e-15. No branches.
GELU_LIMIT = 8.0
GELU_PIECES = 4096
GELU_DEGREE = 3
GELU_TOLERANCE = 1e-13  # largest absolute error allowed against math.erfc's exact GELU


def exact_gelu(x: float) -> float:
    """x * Phi(x), from math.erfc: no cancellation on either side."""
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def gelu_tables() -> np.ndarray:
    """Power-basis coefficients, shape (degree + 1, pieces), of GELU(-a) on each piece, in s = [-1, 1]."""
    from numpy.polynomial import chebyshev

    width = GELU_LIMIT / GELU_PIECES
    # Interpolation at the Chebyshev points of each piece: close to the best polynomial of its degree.
    # One fit for all pieces (a column each): the same numbers as one fit per piece, 6x sooner.
    nodes = np.cos(np.pi * (np.arange(GELU_DEGREE + 1) + 0.5) / (GELU_DEGREE + 1))
    lefts = np.arange(GELU_PIECES) * width
    values = np.array([[exact_gelu(-(left + (float(s) + 1.0) * width / 2.0)) for left in lefts] for s in nodes])
    fitted = chebyshev.chebfit(nodes, values, GELU_DEGREE)
    tables = np.zeros((GELU_DEGREE + 1, GELU_PIECES), dtype=np.float64)
    for piece in range(GELU_PIECES):
        power = chebyshev.cheb2poly(fitted[:, piece])
        tables[: len(power), piece] = power
    return tables


def piecewise_gelu(x: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The same arithmetic as the exported graph, in numpy (for checking the tables)."""
    position = np.minimum(np.abs(x), GELU_LIMIT) * (GELU_PIECES / GELU_LIMIT)
    piece = np.minimum(np.floor(position), GELU_PIECES - 1)
    s = 2.0 * (position - piece) - 1.0
    index = piece.astype(np.int64)
    value = tables[-1][index]
    for row in tables[-2::-1]:
        value = value * s + row[index]
    result: np.ndarray = np.maximum(x, 0.0) + value
    return result


def check_gelu_tables(tables: np.ndarray) -> float:
    """The largest error of the piecewise GELU on a dense grid and the tails (raises past tolerance)."""
    grid = np.concatenate([np.linspace(-12.0, 12.0, 240_001), np.random.default_rng(0).normal(0.0, 3.0, 20_000)])
    exact = np.array([exact_gelu(float(v)) for v in grid])
    worst = float(np.abs(piecewise_gelu(grid, tables) - exact).max())
    if worst > GELU_TOLERANCE:
        raise CannotMeasure(f"exporting {DEFAULT_MODEL}: the float64 GELU is off by {worst:.3g}")
    return worst
