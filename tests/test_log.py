"""The library's log lines, as the command line and the Action show them."""

from __future__ import annotations

import logging

import pytest

from stabilitygate.log import NAME, log_to_stderr


def test_the_librarys_lines_go_to_stderr_once_however_often_it_is_asked(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger(NAME)
    before = list(logger.handlers)
    try:
        log_to_stderr()
        log_to_stderr()
        logger.info("baseline written to %s", "suite.baseline.json")
        logger.debug("not shown")
        captured = capsys.readouterr()
        assert captured.err == "stabilitygate: baseline written to suite.baseline.json\n"
        assert captured.out == ""
    finally:
        logger.handlers[:] = before
