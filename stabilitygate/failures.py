"""The one error handler of the command line, the Action and the container's entrypoint.

Whatever stops a run becomes a `Failure`: the exit code and one line for the user, never a
traceback (docs/design.md §3): a domain error keeps its own code (2 bad input, 3 could not
measure), Ctrl-C and a bug of ours are 3. Each caller only says where the line goes (stderr, the
job log, an annotation). With STABILITYGATE_DEBUG set, the traceback comes with it.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
