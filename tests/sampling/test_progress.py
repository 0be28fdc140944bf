"""The progress display: a bar on a terminal, a line every few seconds in a CI log, nothing when off."""

from __future__ import annotations

import io

from stabilitygate.samples import Sample
from stabilitygate.sampling.progress import Progress

OK = Sample(case="c", index=0, text="x")
FAILED = Sample(case="c", index=1, text=None, error="timeout: no reply")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_log_mode_writes_a_line_every_interval_and_a_final_one() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(10, stream=stream, interactive=False, clock=clock)
    progress.advance(OK)
    clock.now += 2
    progress.advance(OK)
    assert stream.getvalue() == ""  # nothing before the first interval
    clock.now += 3.5
    progress.advance(FAILED)
    assert stream.getvalue() == "sampling: 3/10 samples, 1 failed, 5.5 s\n"
    clock.now += 1
    progress.advance(OK)
    assert stream.getvalue().count("\n") == 1  # next line only 5 s after the last
    clock.now += 1
    progress.close()
    progress.close()  # idempotent
    assert stream.getvalue().splitlines() == [
        "sampling: 3/10 samples, 1 failed, 5.5 s",
        "sampling: 4/10 samples, 1 failed, 7.5 s",
    ]
    assert "\r" not in stream.getvalue()


def test_terminal_mode_redraws_a_bar_in_place() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(4, stream=stream, interactive=True, clock=clock)
    for _ in range(4):
        clock.now += 0.2
        progress.advance(OK)
    progress.close()
    out = stream.getvalue()
    draws = out.split("\r")[1:]
    assert len(draws) == 5  # one per sample (each 0.2 s apart) and the final one
    assert draws[0].startswith("[" + "#" * 7 + "-" * 23 + "] 1/4 samples")
    assert draws[-1].startswith("[" + "#" * 30 + "] 4/4 samples, 0.8 s")
    assert out.endswith("\x1b[K\n")


def test_terminal_mode_throttles_fast_updates() -> None:
    stream, clock = io.StringIO(), Clock()
    progress = Progress(100, stream=stream, interactive=True, clock=clock)
    for _ in range(50):
        clock.now += 0.001
        progress.advance(OK)
    assert stream.getvalue().count("\r") == 1


def test_disabled_progress_is_silent_but_still_counts() -> None:
    stream = io.StringIO()
    progress = Progress(2, stream=stream, interactive=True, enabled=False)
    progress.advance(OK)
    progress.advance(FAILED)
    progress.close()
    assert stream.getvalue() == "" and progress.done == 2 and progress.errors == 1


def test_a_stream_that_is_not_a_terminal_means_log_mode() -> None:
    assert Progress(1, stream=io.StringIO()).interactive is False
