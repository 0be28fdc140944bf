"""Writing an export of the default embedding model: the graph beside the model's files, and its manifest.

`write_export(OUT_DIR, SOURCE)` puts the pinned model files of SOURCE (model.safetensors,
tokenizer.json; linked where the filesystem allows, so the weights are stored once, else copied) beside
a graph built from them (measure/onnx_graph.py; needs `onnx`, not torch) and writes the manifest last.
The directory appears whole or not at all: it is written beside OUT_DIR, then renamed. Used by
scripts/build_wheel.py (the wheel carries the export), by the user's cache in a development checkout
(measure/export_cache.py), and by `python -m stabilitygate.measure.onnx_export OUT_DIR`, which writes
a self-contained copy to mount with $STABILITYGATE_MODEL_DIR.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from stabilitygate.atomic import write_text_atomic
from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.export_manifest import EXPORT_FORMAT, INPUT_NAMES, MANIFEST_NAME, ONNX_NAME, read_manifest
from stabilitygate.measure.model_files import (
    DEFAULT_MODEL,
    PINNED,
    WEIGHTS_NAME,
    bundled_dir,
    check_pinned,
    file_sha256,
    not_installed,
    package_model_dir,
)
from stabilitygate.measure.onnx_graph import write_graph

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the model
DIMENSION = 384
PROBE_TEXT = "Richard Feynman was born in Queens, New York, in 1918."
# The leading components of PROBE_TEXT's vector as sentence-transformers computes it in float64
# (checked against it by tests/measure/test_onnx_graph.py): every load of an export must reproduce them.
PROBE_REFERENCE = (
    0.014700250215942852,
    -0.06064501959422295,
    -0.004351108900608262,
    -0.025279135974827203,
    0.02120412411129763,
    0.038842318121373905,
    -0.03442913558506864,
    0.020385343614695215,
    -0.11123576592480204,
    0.015291095802056122,
    -0.016602257434797787,
    0.02587698920191236,
    -0.1218116430840528,
    0.01487873115583082,
    -0.032649500103938314,
    0.10028625937720773,
)


def _place(source: Path, target: Path, *, link: bool) -> None:
    if link:
        with contextlib.suppress(OSError):  # no symlinks here (some filesystems, Windows): copy
            target.symlink_to(source.resolve())
            return
    shutil.copyfile(source, target)


def _write_manifest(directory: Path, weights: list[str]) -> None:
    graph = directory / ONNX_NAME
    files = {name: {"bytes": size, "sha256": sha256} for name, (size, sha256) in PINNED.items()}
    files[ONNX_NAME] = {"bytes": graph.stat().st_size, "sha256": file_sha256(graph)}
    manifest = {
        "format": EXPORT_FORMAT,
        "model": DEFAULT_MODEL,
        "dtype": "float64",
        "files": files,
        "weights": weights,
        "dimension": DIMENSION,
        "max_seq_length": MAX_SEQ_LENGTH,
        "inputs": list(INPUT_NAMES),
        "built_with": {name: metadata.version(name) for name in ("onnx", "numpy")},
        "probe": {"text": PROBE_TEXT, "vector": list(PROBE_REFERENCE)},
    }
    write_text_atomic(directory / MANIFEST_NAME, json.dumps(manifest, indent=1) + "\n")


def write_export(out_dir: Path, source: Path, *, link: bool) -> None:
    """Write the export of the model files in `source` (checked against their pins) into out_dir."""
    check_pinned(source)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for name in PINNED:
            _place(source / name, staging / name, link=link)
        weights = write_graph(staging / WEIGHTS_NAME, staging / ONNX_NAME)
        _write_manifest(staging, weights)
        for path in staging.iterdir():
            if not path.is_symlink():
                path.chmod(0o644)  # readable by whatever user runs it (mkdtemp makes 0700)
        staging.chmod(0o755)
        read_manifest(staging)
        if out_dir.exists() or out_dir.is_symlink():
            aside = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old.", dir=out_dir.parent))
            os.replace(out_dir, aside / out_dir.name)
            shutil.rmtree(aside, ignore_errors=True)
        os.replace(staging, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _installed_source() -> Path:
    for candidate in (bundled_dir(), package_model_dir()):
        if candidate is not None and (candidate / WEIGHTS_NAME).exists():
            return candidate
    raise not_installed()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stabilitygate.measure.onnx_export",
        description=f"Write a self-contained export of {DEFAULT_MODEL} into OUT_DIR (to mount with "
        "$STABILITYGATE_MODEL_DIR=PARENT); the gate itself never needs this.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path)
    args = parser.parse_args(argv)
    out_dir = args.out_dir.expanduser().absolute()
    try:
        write_export(out_dir, _installed_source(), link=False)
    except BadInput as exc:  # the install lacks the model's files or onnx
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CannotMeasure as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot write {out_dir}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"{DEFAULT_MODEL}: wrote the float64 ONNX export to {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
