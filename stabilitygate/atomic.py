"""Writing files so that a crash never leaves half a file behind: one mechanism for every writer.

No writer follows a symbolic link at the path it writes: an atomic write renames over the link,
and a file written line by line (`open_lines`) is opened with O_NOFOLLOW, so a link committed
where the gate writes cannot point a write (as root, in the Action) at a file outside
(docs/design.md §15).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import IO

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write a temporary file beside `path`, then rename it over `path`.

    The mode follows the umask, as for any file the user writes (mkstemp would make it 0600).
    `durable` also fsyncs the data and the directory, so the rename survives a power cut; a cache
    entry can do without.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    if durable:
        _fsync_dir(target.parent)


def open_lines(path: str | os.PathLike[str], *, append: bool) -> IO[str]:
    """`path` opened for writing text line by line (appended to, or started afresh), never through a
    symbolic link: one there is OSError (ELOOP)."""
    mode = os.O_APPEND if append else os.O_TRUNC
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | mode | _NO_FOLLOW, 0o666)
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8", newline="\n")


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (POSIX); harmless where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
