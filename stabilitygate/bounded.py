"""Reading an input file no bigger than its limit: the size is checked before a byte is read.

A report, baseline, samples or suite file may come from a fork's job or a damaged artifact; one of
several gigabytes must be refused at once, not parsed for minutes in the privileged job
(docs/design.md §8, "Files").
"""

from __future__ import annotations

import os
import stat

from stabilitygate.errors import BadInput

MIB = 1024 * 1024
#: The largest suite file read: thousands of cases fit in a few hundred KiB.
MAX_SUITE_BYTES = 8 * MIB
#: The largest baseline read: per case a hash, counts and answer rows.
MAX_BASELINE_BYTES = 32 * MIB
#: The largest report read (merge, comment-from): a report carries each case's distinct completions.
MAX_REPORT_BYTES = 64 * MIB
#: The largest samples file read (score, merge): every completion of a run, one JSON line each.
MAX_SAMPLES_BYTES = 1024 * MIB


def read_bytes_bounded(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of `path`; BadInput naming the file when it holds more than `limit` bytes.

    FileNotFoundError passes through (a missing file may be fine); other OS errors are BadInput.
    Only a regular file is read: a FIFO, a device or a socket is refused before it is opened (a
    FIFO's open() blocks until a writer comes, which may be never), and again on the open file, which
    is opened without blocking for that reason. The size is taken from the open file before reading,
    and at most `limit + 1` bytes are ever read, so a file that grows meanwhile cannot slip past the
    limit.
    """
    shown = str(path)
    try:
        _check_regular(os.stat(path).st_mode, shown, what)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with open(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            _check_regular(info.st_mode, shown, what)  # replaced between the two looks
            os.set_blocking(fd, True)
            if info.st_size > limit:
                raise too_big(shown, what, info.st_size, limit)
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BadInput(f"cannot read {what}: {exc.strerror or exc}", path=shown) from exc
    if len(data) > limit:
        raise too_big(shown, what, None, limit)
    return data


def _check_regular(mode: int, shown: str, what: str) -> None:
    if stat.S_ISDIR(mode):
        raise BadInput(f"cannot read {what}: it is a directory", path=shown)
    if not stat.S_ISREG(mode):
        raise BadInput(f"cannot read {what}: it is not a regular file (a FIFO, a device or a socket)", path=shown)


def too_big(shown: str, what: str, size: int | None, limit: int) -> BadInput:
    held = f" ({_mib(size)} MiB)" if size is not None else ""
    return BadInput(f"{what} is too big{held}: this gate reads at most {_mib(limit)} MiB of it", path=shown)


def _mib(size: int) -> str:
    return f"{size / MIB:,.1f}".removesuffix(".0")
