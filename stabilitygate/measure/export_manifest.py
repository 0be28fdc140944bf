"""What an export of the default embedding model is: its files' names, where it is mounted, its manifest.

An export is a directory: the graph (model.onnx, written by measure/onnx_graph.py), the model's own
weights (model.safetensors) and tokenizer (tokenizer.json), and the manifest that records their sizes
and sha256s (stabilitygate-export.json, written last). The writer (measure/onnx_export.py), the cache
that builds one in a development checkout (measure/export_cache.py) and the backend that runs it
(measure/onnx_backend.py) all read these names and this manifest from here, and this module imports
none of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.model_files import DEFAULT_MODEL, TOKENIZER_NAME, WEIGHTS_NAME, check_file, reinstall_hint

MODEL_DIR_ENV = "STABILITYGATE_MODEL_DIR"
MANIFEST_NAME = "stabilitygate-export.json"
ONNX_NAME = "model.onnx"
CHECKED_FILES = (ONNX_NAME, WEIGHTS_NAME, TOKENIZER_NAME)
EXPORT_FORMAT = 2  # 1: a graph traced from torch, with its own copy of the weights
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def mounted_dir(model: str = DEFAULT_MODEL) -> Path | None:
    mounted = os.environ.get(MODEL_DIR_ENV)
    return Path(mounted).expanduser() / model if mounted else None


@dataclass(frozen=True)
class ExportManifest:
    """What the export's writer recorded about it (stabilitygate-export.json)."""

    directory: Path
    files: tuple[tuple[str, int, str], ...]  # (name, bytes, sha256) of the graph, weights and tokenizer
    weights: tuple[str, ...]  # the tensors of model.safetensors that the graph uses, by name
    dimension: int
    max_seq_length: int
    probe_text: str
    probe_vector: tuple[float, ...]  # its leading components

    @property
    def onnx_path(self) -> Path:
        return self.directory / ONNX_NAME

    @property
    def weights_path(self) -> Path:
        return self.directory / WEIGHTS_NAME

    @property
    def tokenizer_path(self) -> Path:
        return self.directory / TOKENIZER_NAME

    @property
    def identity(self) -> str:
        """A hash of the export's files as recorded (the embedding cache's key: no file is read for it)."""
        digest = hashlib.sha256()
        for name, size, sha256 in self.files:
            digest.update(f"{name}\0{size}\0{sha256}\0".encode())
        return digest.hexdigest()


def _remedy(path: Path) -> str:
    mounted = mounted_dir()
    if mounted is not None and path.absolute().is_relative_to(mounted.absolute()):
        return f"${MODEL_DIR_ENV} points here: mount a complete export there, or unset it to use the installed model"
    return reinstall_hint(path)


def broken_export(directory: Path, what: str, path: Path | None = None) -> CannotMeasure:
    """The error of an export that cannot be used: what is wrong with it, and what to do."""
    return CannotMeasure(f"the ONNX export of {DEFAULT_MODEL} at {directory} is {what}: {_remedy(path or directory)}")


def read_manifest(directory: Path) -> ExportManifest:
    """The export's manifest, checked for shape and for the files it names (cheap: no hashing)."""
    manifest = directory / MANIFEST_NAME
    if not manifest.is_file():
        raise broken_export(directory, "missing")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if data["format"] != EXPORT_FORMAT or data["model"] != DEFAULT_MODEL:
            raise ValueError(f"format {data['format']!r} of model {data['model']!r}, not {EXPORT_FORMAT}")
        found = ExportManifest(
            directory=directory,
            files=tuple(
                (name, int(data["files"][name]["bytes"]), str(data["files"][name]["sha256"])) for name in CHECKED_FILES
            ),
            weights=tuple(str(name) for name in data["weights"]),
            dimension=int(data["dimension"]),
            max_seq_length=int(data["max_seq_length"]),
            probe_text=str(data["probe"]["text"]),
            probe_vector=tuple(float(v) for v in data["probe"]["vector"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise broken_export(directory, f"corrupt (unreadable {MANIFEST_NAME}: {exc})") from exc
    for name in CHECKED_FILES:
        if not (directory / name).is_file():
            raise broken_export(directory, f"corrupt ({name} is missing)", directory / name)
    if not 0 < len(found.probe_vector) <= found.dimension:
        raise broken_export(directory, "corrupt (its probe vector has the wrong length)")
    return found


def verify_files(manifest: ExportManifest) -> None:
    """The graph, weights and tokenizer are the files the writer recorded (size, then sha256)."""
    for name, size, sha256 in manifest.files:
        path = manifest.directory / name
        try:
            check_file(path, size, sha256)
        except CannotMeasure as exc:
            what = "unreadable" if isinstance(exc.__cause__, OSError) else "does not match its recorded sha256"
            raise broken_export(manifest.directory, f"corrupt ({name} {what})", path) from exc
