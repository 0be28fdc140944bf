"""The one error handler of the command line, the Action and the container's entrypoint.

Whatever stops a run becomes a `Failure`: the exit code and one line for the user, never a
traceback (docs/design.md §3): a domain error keeps its own code (2 bad input, 3 could not
measure), Ctrl-C and a bug of ours are 3. Each caller only says where the line goes (stderr, the
job log, an annotation). With STABILITYGATE_DEBUG set, the traceback comes with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import TypeVar

from stabilitygate.errors import EXIT_CANNOT_MEASURE, GateError

DEBUG_ENV = "STABILITYGATE_DEBUG"
T = TypeVar("T")


@dataclass(frozen=True)
class Failure:
    """Why a run stopped: its exit code, one line, and the traceback when debugging."""

    code: int
    line: str  # "error: ...", "interrupted" or "internal error: ..."
    traceback: str | None = None


def failure_of(exc: BaseException, environ: Mapping[str, str] | None = None) -> Failure:
    """The failure an exception that reached the top means for the user."""
    debug = bool((os.environ if environ is None else environ).get(DEBUG_ENV))
    shown = "".join(traceback.format_exception(exc)).rstrip() if debug else None
    if isinstance(exc, GateError):
        return Failure(exc.exit_code, f"error: {exc}", shown)
    if isinstance(exc, KeyboardInterrupt):
        return Failure(EXIT_CANNOT_MEASURE, "interrupted")
    hint = "" if debug else f" ({DEBUG_ENV}=1 shows the traceback)"
    return Failure(EXIT_CANNOT_MEASURE, f"internal error: {type(exc).__name__}: {exc}{hint}", shown)


def guarded(
    call: Callable[[], T], report: Callable[[Failure], None], environ: Mapping[str, str] | None = None
) -> T | Failure:
    """`call()`, or the Failure it stopped with, after `report` has shown it.

    SystemExit passes through: it is the command line's own way to end with a code.
    """
    try:
        return call()
    except (Exception, KeyboardInterrupt) as exc:  # everything a run can stop with, reported the one way
        failure = failure_of(exc, environ)
        report(failure)
        return failure


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a cancelled job, `docker stop`) becomes a KeyboardInterrupt, as Ctrl-C is, at any
    stage: every `finally` runs (the log's commands are resumed), and the run ends through `guarded`
    with its annotation, summary and outputs, exit 3 (docs/design.md §15). Later SIGTERMs are
    ignored, so that the reporting of the first one finishes; the runner's SIGKILL still ends a
    process that does not. Outside the main thread, signals are left alone."""
    try:
        previous = signal.signal(signal.SIGTERM, _interrupt_once)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt_once(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt("terminated (SIGTERM)")
