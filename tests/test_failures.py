"""The one error handler: what each way a run can stop becomes (exit code, one line, traceback on request)."""

from __future__ import annotations

import contextlib

import pytest

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.failures import Failure, failure_of, guarded


def test_domain_errors_keep_their_code_and_message() -> None:
    assert failure_of(BadInput("no such file", path="s.yml"), {}) == Failure(2, "error: s.yml: no such file")
    assert failure_of(CannotMeasure("server gone"), {}) == Failure(3, "error: server gone")


def test_ctrl_c_and_bugs_are_exit_3_in_one_line() -> None:
    assert failure_of(KeyboardInterrupt(), {}) == Failure(3, "interrupted")
    bug = failure_of(KeyError("choices"), {})
    assert bug == Failure(3, "internal error: KeyError: 'choices' (STABILITYGATE_DEBUG=1 shows the traceback)")


def test_debugging_adds_the_traceback_with_its_causes() -> None:
    try:
        try:
            raise ValueError("deep cause")
        except ValueError as cause:
            raise BadInput("bad file") from cause
    except BadInput as exc:
        failure = failure_of(exc, {"STABILITYGATE_DEBUG": "1"})
    assert failure.code == 2 and failure.line == "error: bad file"
    assert failure.traceback is not None and "ValueError: deep cause" in failure.traceback
    assert "direct cause of the following exception" in failure.traceback


def test_guarded_returns_the_value_or_the_reported_failure() -> None:
    shown: list[Failure] = []
    assert guarded(lambda: 7, shown.append, {}) == 7 and shown == []

    def broken() -> int:
        raise BadInput("input `samples`: expected a whole number")

    outcome = guarded(broken, shown.append, {})
    assert outcome == Failure(2, "error: input `samples`: expected a whole number") and shown == [outcome]


def test_system_exit_is_not_a_failure() -> None:
    def leave() -> int:
        raise SystemExit(4)

    with pytest.raises(SystemExit):
        guarded(leave, lambda failure: None, {})


def test_sigterm_becomes_an_interrupt_once_and_the_handler_is_restored() -> None:
    """Issue 25, item 8: SIGTERM ends a run like Ctrl-C at any stage; a second one waits for the first."""
    import os
    import signal

    from stabilitygate.failures import sigterm_interrupts

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"), sigterm_interrupts():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pthread_sigmask(signal.SIG_BLOCK, [])  # any call: the handler runs between bytecodes
        raise AssertionError("not interrupted")
    assert signal.getsignal(signal.SIGTERM) == before
    with sigterm_interrupts():
        with contextlib.suppress(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            signal.pthread_sigmask(signal.SIG_BLOCK, [])
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN  # reporting the first is not cut short
    assert signal.getsignal(signal.SIGTERM) == before
