"""What fails the gate: the `--fail-on` (Action `fail-on`) choices, with no import of their own, so that
the command line can offer them without loading the judge (`--help` stays fast)."""

from __future__ import annotations

from typing import Literal, get_args

#: Which verdicts fail the gate (exit 1): the one definition the CLI, the Action and the library use.
FailOn = Literal["regression", "fail", "warn", "never"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = get_args(FailOn)
