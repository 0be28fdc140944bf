"""An on-disk cache of text embeddings, shared by runs (and by CI jobs through actions/cache).

Layout: ROOT/<model key>/<sha256 of the text, 2 chars>/<sha256 of the text>.f32, one small file per
vector. The model key is the model's name plus a hash of its files, so a changed model never reads
another's vectors. Each file is written to a temporary name and renamed into place (atomic on POSIX), so
concurrent runs may write the same entry and a reader never sees half a file. Each entry carries a
CRC-32 of its text's key and its vector, so a file that does not check out (truncated, garbled, or
another text's) is never trusted: it is a miss, re-embedded, with one warning per run. An entry of an
older format is a silent miss. An unwritable cache only costs speed: it never fails a run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import struct
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from stabilitygate.atomic import write_atomic

log = logging.getLogger(__name__)

ENV_VAR = "STABILITYGATE_CACHE_DIR"
_DISABLED = {"", "off", "none", "false", "0", "no"}
_MAGIC = b"SGE2"
_OLDER_FORMATS = {b"SGE1"}
_HEADER = struct.Struct("<4sII")  # magic, dimension, CRC-32 of the text's key and the vector bytes


def default_cache_dir() -> Path | None:
    """$STABILITYGATE_CACHE_DIR (where "" or "off" disables the cache), else ~/.cache/stabilitygate/embeddings."""
    setting = os.environ.get(ENV_VAR)
    if setting is not None:
        return None if setting.strip().lower() in _DISABLED else Path(setting).expanduser()
    return Path.home() / ".cache" / "stabilitygate" / "embeddings"


def resolve_cache_dir(cache_dir: str | os.PathLike[str] | None) -> Path | None:
    """None -> the default location; "" or "off" -> no cache; anything else -> that directory."""
    if cache_dir is None:
        return default_cache_dir()
    text = os.fspath(cache_dir)
    return None if text.strip().lower() in _DISABLED else Path(text).expanduser()


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def model_key(model_name: str, files_hash: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model_name.rstrip("/").rsplit("/", 1)[-1])[:60] or "model"
    return f"{slug}-{files_hash[:16]}"


class EmbeddingCache:
    """Vectors of one model, keyed by the sha256 of the text."""

    def __init__(self, root: str | os.PathLike[str], model: str) -> None:
        self.root = Path(root)
        self.directory = self.root / model
        self._writable = True
        self._warned = False  # one warning per run for damaged entries

    def has_entries(self) -> bool:
        """Whether any vector of this model is stored (one directory listing: no entry is read)."""
        try:
            with os.scandir(self.directory) as entries:
                return any(entry.is_dir() for entry in entries)
        except OSError:
            return False

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.f32"

    def get(self, text: str) -> np.ndarray | None:
        key = text_key(text)
        try:
            blob = self._path(key).read_bytes()
        except OSError:
            return None
        if blob[:4] in _OLDER_FORMATS:
            return None  # recomputed and rewritten in today's format, not an error
        vector = _checked_vector(key, blob)
        if vector is None:
            self._damaged(key)
        return vector

    def _damaged(self, key: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning(
                "embedding cache entry %s is damaged: ignored and re-embedded (later ones are too, silently)",
                self._path(key),
            )

    def get_many(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for text in texts:
            vector = self.get(text)
            if vector is not None:
                found[text] = vector
        return found

    def put(self, text: str, vector: np.ndarray) -> None:
        if not self._writable:
            return
        key = text_key(text)
        data = np.ascontiguousarray(vector, dtype="<f4").tobytes()
        blob = _HEADER.pack(_MAGIC, len(data) // 4, _checksum(key, data)) + data
        target = self._path(key)
        try:
            # Readers see a whole entry or none; a lost entry is only recomputed, so no fsync.
            write_atomic(target, blob, durable=False)
        except OSError as exc:
            # A read-only or full disk makes the run slower, never wrong: stop writing, keep measuring.
            self._writable = False
            log.warning("embedding cache %s is not writable, continuing without it: %s", self.root, exc)

    def put_many(self, vectors: Mapping[str, np.ndarray]) -> None:
        for text, vector in vectors.items():
            self.put(text, vector)


def _checksum(key: str, data: bytes) -> int:
    return zlib.crc32(data, zlib.crc32(key.encode("ascii")))


def _checked_vector(key: str, blob: bytes) -> np.ndarray | None:
    """The entry's vector when its length, checksum and values check out; else None."""
    if len(blob) < _HEADER.size:
        return None
    magic, dim, crc = _HEADER.unpack_from(blob)
    data = blob[_HEADER.size :]
    if magic != _MAGIC or dim == 0 or len(data) != 4 * dim or _checksum(key, data) != crc:
        return None
    vector = np.frombuffer(data, dtype="<f4").astype(np.float32)
    return vector if np.isfinite(vector).all() else None
