"""The library's log lines as the command line and the Action show them: `stabilitygate: ...` on stderr.

The library logs to the `stabilitygate` logger and never configures it; each front end calls
`log_to_stderr()` once, before it runs anything.
"""

from __future__ import annotations

import logging

import click

#: The logger the library writes to, and the prefix of its lines.
NAME = "stabilitygate"


class _StderrHandler(logging.Handler):
    """Each record as `stabilitygate: MESSAGE` on whatever stderr is at the time (tests capture it)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(f"{NAME}: {record.getMessage()}", err=True)


def log_to_stderr() -> None:
    """Show the library's INFO lines and above on stderr; calling it again adds nothing."""
    logger = logging.getLogger(NAME)
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.setLevel(logging.INFO)
