"""Sampling progress on stderr: a bar redrawn in place on a terminal, a plain line now and then in CI logs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from stabilitygate.samples import Sample

BAR_WIDTH = 30
TTY_REDRAW_S = 0.1  # redrawing on every sample would cost more than the samples at high rates
LOG_INTERVAL_S = 5.0


class Progress:
    """Counts samples as they arrive and shows how far the run is; silent when `enabled` is false."""

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        enabled: bool = True,
        interval_s: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(total, 0)
        self.stream = sys.stderr if stream is None else stream
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty and isatty())
        self.interactive = interactive
        self.enabled = enabled
        self.interval_s = interval_s
        self.clock = clock
        self.done = 0
        self.errors = 0
        self._start = clock()
        self._last_draw: float | None = None
        self._closed = False

    def advance(self, sample: Sample) -> None:
        self.done += 1
        if not sample.ok:
            self.errors += 1
        if not self.enabled or self._closed:
            return
        now = self.clock()
        if self.interactive:
            if self._last_draw is None or now - self._last_draw >= TTY_REDRAW_S or self.done >= self.total:
                self._draw_bar(now)
        elif now - (self._last_draw if self._last_draw is not None else self._start) >= self.interval_s:
            self._write_line(now)

    def close(self) -> None:
        """Show the final count once (and end the bar's line); later calls do nothing."""
        if self._closed:
            return
        self._closed = True
        if not self.enabled:
            return
        now = self.clock()
        if self.interactive:
            self._draw_bar(now)
            self.stream.write("\n")
        else:
            self._write_line(now)
        self.stream.flush()

    def _counts(self, now: float) -> str:
        errors = f", {self.errors} failed" if self.errors else ""
        return f"{self.done}/{self.total} samples{errors}, {now - self._start:.1f} s"

    def _draw_bar(self, now: float) -> None:
        filled = BAR_WIDTH if self.total == 0 else min(BAR_WIDTH, BAR_WIDTH * self.done // self.total)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        # \r and a clear-to-end-of-line keep the bar on one line as it shrinks or grows.
        self.stream.write(f"\r[{bar}] {self._counts(now)}\x1b[K")
        self.stream.flush()
        self._last_draw = now

    def _write_line(self, now: float) -> None:
        self.stream.write(f"sampling: {self._counts(now)}\n")
        self.stream.flush()
        self._last_draw = now
