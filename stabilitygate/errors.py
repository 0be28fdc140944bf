"""The domain errors, each carrying the exit code the command line maps it to (docs/design.md §3, "Command line")."""

from __future__ import annotations

from typing import Literal

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_BAD_INPUT = 2
EXIT_CANNOT_MEASURE = 3

#: What the job does under the chosen `--fail-on`, beside what the run found (the report's `verdict`):
#: the report's `outcome` (docs/design.md §8). A report is never written for bad input.
JobOutcome = Literal["pass", "fail", "error"]


def job_outcome(exit_code: int) -> JobOutcome:
    """pass (exit 0), fail (exit 1), error (exit 3: the run could not measure)."""
    return "pass" if exit_code == EXIT_PASS else "fail" if exit_code == EXIT_FAIL else "error"


class GateError(Exception):
    """Base of every error the gate reports to its user as one line, never a traceback."""

    exit_code = EXIT_CANNOT_MEASURE


class BadInput(GateError):
    """A suite, baseline, samples file or flag that cannot be used (exit 2).

    The message already names the file and, where there is one, the line.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class CannotMeasure(GateError):
    """The run could not measure: provider unreachable, authentication refused, ... (exit 3)."""

    exit_code = EXIT_CANNOT_MEASURE
