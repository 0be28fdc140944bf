"""The container's entrypoint: run the GitHub Action, never ending in a traceback."""

from __future__ import annotations

import os
import sys


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _run() -> int:
    try:
        from stabilitygate.github.action import main

        return main(os.environ)
    except KeyboardInterrupt:
        print("::error title=llm-stability-gate::interrupted", flush=True)
        return 3
    except Exception as exc:  # a bug of ours: one annotated line instead of a traceback
        if os.environ.get("STABILITYGATE_DEBUG"):
            raise
        message = f"internal error: {type(exc).__name__}: {exc} (set STABILITYGATE_DEBUG=1 for the traceback)"
        print(f"::error title=llm-stability-gate::{_escape(message)}", flush=True)
        return 3


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    raise SystemExit(_run())
