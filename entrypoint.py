"""The container's entrypoint: run the GitHub Action, never ending in a traceback.

Whatever stops the Action goes through the one handler of `stabilitygate.failures` and becomes an
error annotation; only an install so broken that the package cannot be imported is handled here.
"""

from __future__ import annotations

import os
import sys

BROKEN_INSTALL_EXIT = 3


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _annotate(line: str) -> None:
    print(f"::error title=llm-stability-gate::{_escape(line)}", flush=True)


def _run() -> int:
    try:
        from stabilitygate.failures import Failure, guarded
        from stabilitygate.github.action import main
    except Exception as exc:  # the package itself does not import: the handler cannot load either
        if os.environ.get("STABILITYGATE_DEBUG"):
            raise
        _annotate(f"internal error: {type(exc).__name__}: {exc} (STABILITYGATE_DEBUG=1 shows the traceback)")
        return BROKEN_INSTALL_EXIT

    def report(failure: Failure) -> None:
        _annotate(failure.line)
        if failure.traceback:
            print(failure.traceback, flush=True)

    outcome = guarded(lambda: main(os.environ), report)
    return outcome.code if isinstance(outcome, Failure) else outcome


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    raise SystemExit(_run())
