"""A float64 GELU that onnxruntime can run: the exact function as a piecewise polynomial, and its swap-in.

onnxruntime has no float64 kernel for Erf, the heart of the exact GELU, so the export replaces every
GELU of the model by a piecewise polynomial of it (within GELU_TOLERANCE of the exact function), made
of operators that do run in float64 (Gather, Floor, Mul, Add, Relu). The tables are checked against
math.erfc before any graph is traced with them. torch is imported only by the swap itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import DEFAULT_MODEL

# GELU(x) = max(x, 0) + GELU(-|x|), and GELU(-a) for a in [0, 8] is a piecewise polynomial: degree
# _GELU_DEGREE on each of _GELU_PIECES equal pieces; beyond 8 it is 0 to within 5e-15. No branches.
_GELU_LIMIT = 8.0
_GELU_PIECES = 4096
_GELU_DEGREE = 3
GELU_TOLERANCE = 1e-13  # largest absolute error allowed against math.erfc's exact GELU


def exact_gelu(x: float) -> float:
    """x * Phi(x), from math.erfc: no cancellation on either side."""
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def gelu_tables() -> np.ndarray:
    """Power-basis coefficients, shape (degree + 1, pieces), of GELU(-a) on each piece, in s = [-1, 1]."""
    from numpy.polynomial import chebyshev

    width = _GELU_LIMIT / _GELU_PIECES
    # Interpolation at the Chebyshev points of each piece: close to the best polynomial of its degree.
    nodes = np.cos(np.pi * (np.arange(_GELU_DEGREE + 1) + 0.5) / (_GELU_DEGREE + 1))
    tables = np.zeros((_GELU_DEGREE + 1, _GELU_PIECES), dtype=np.float64)
    for piece in range(_GELU_PIECES):
        left = piece * width
        values = [exact_gelu(-(left + (float(s) + 1.0) * width / 2.0)) for s in nodes]
        power = chebyshev.cheb2poly(chebyshev.chebfit(nodes, values, _GELU_DEGREE))
        tables[: len(power), piece] = power
    return tables


def piecewise_gelu(x: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The same arithmetic as the exported graph, in numpy (for checking the tables)."""
    position = np.minimum(np.abs(x), _GELU_LIMIT) * (_GELU_PIECES / _GELU_LIMIT)
    piece = np.minimum(np.floor(position), _GELU_PIECES - 1)
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


def _double_gelu_module(tables: np.ndarray) -> Any:
    import torch

    class DoubleGelu(torch.nn.Module):
        """Exact GELU in float64 from operators onnxruntime runs in float64 (Gather, Floor, Mul, Add, Relu)."""

        def __init__(self) -> None:
            super().__init__()
            for j, row in enumerate(tables):
                self.register_buffer(f"c{j}", torch.tensor(row, dtype=torch.float64))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            position = torch.clamp(torch.abs(x), max=_GELU_LIMIT) * (_GELU_PIECES / _GELU_LIMIT)
            piece = torch.clamp(torch.floor(position), max=_GELU_PIECES - 1)
            s = 2.0 * (position - piece) - 1.0
            index = piece.to(torch.int64)
            value = getattr(self, f"c{len(tables) - 1}")[index]
            for j in range(len(tables) - 2, -1, -1):
                value = value * s + getattr(self, f"c{j}")[index]
            result: torch.Tensor = torch.relu(x) + value
            return result

    return DoubleGelu()


def swap_gelu(model: Any, tables: np.ndarray) -> int:
    """Replace every exact-GELU activation by DoubleGelu; the number replaced."""
    import torch
    from transformers.activations import GELUActivation

    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, GELUActivation | torch.nn.GELU):
                setattr(parent, name, _double_gelu_module(tables))
                swapped += 1
    if not swapped:
        raise CannotMeasure(f"exporting {DEFAULT_MODEL}: found no GELU activation to make float64-capable")
    return swapped
