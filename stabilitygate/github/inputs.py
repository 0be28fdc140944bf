"""The Action's inputs, read from `INPUT_<NAME>` as the runner passes them to a container action.

The runner upper-cases the input name and keeps its hyphens (`update-baseline` ->
`INPUT_UPDATE-BASELINE`). Defaults mirror action.yml, so a bare `docker run` behaves like the Action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from stabilitygate.errors import BadInput

FailOn = Literal["regression", "fail", "never"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = ("regression", "fail", "never")
DEFAULT_SUITE = ".stability/suite.yml"
# The YAML 1.2 core-schema spellings, as actions/toolkit's getBooleanInput accepts them; nothing else.
TRUE_WORDS = ("true", "True", "TRUE")
FALSE_WORDS = ("false", "False", "FALSE")


@dataclass(frozen=True)
class ActionInputs:
    suite: str
    baseline: str | None
    samples: int | None
    update_baseline: bool
    comment: bool
    github_token: str | None
    fail_on: FailOn
    working_directory: str | None


def env_name(name: str) -> str:
    return "INPUT_" + name.replace(" ", "_").upper()


def get_input(environ: Mapping[str, str], name: str) -> str | None:
    """The input's value with surrounding whitespace trimmed; None when unset or empty."""
    value = environ.get(env_name(name))
    if value is None:
        return None
    value = value.strip()
    return value or None


def get_bool(environ: Mapping[str, str], name: str, default: bool) -> bool:
    value = get_input(environ, name)
    if value is None:
        return default
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise BadInput(f"input `{name}`: expected true or false, got {value!r}")


def get_samples(environ: Mapping[str, str]) -> int | None:
    value = get_input(environ, "samples")
    if value is None:
        return None
    try:
        number = int(value, 10)
    except ValueError:
        raise BadInput(f"input `samples`: expected a whole number of at least 2, got {value!r}") from None
    if number < 2:
        raise BadInput(f"input `samples`: expected a whole number of at least 2, got {number}")
    return number


def get_fail_on(environ: Mapping[str, str]) -> FailOn:
    value = get_input(environ, "fail-on") or "regression"
    for choice in FAIL_ON_CHOICES:
        if value == choice:
            return choice
    raise BadInput(f"input `fail-on`: expected one of {', '.join(FAIL_ON_CHOICES)}, got {value!r}")


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """Every input, checked; a bad value raises BadInput (exit 2) naming the input."""
    return ActionInputs(
        suite=get_input(environ, "suite") or DEFAULT_SUITE,
        baseline=get_input(environ, "baseline"),
        samples=get_samples(environ),
        update_baseline=get_bool(environ, "update-baseline", False),
        comment=get_bool(environ, "comment", True),
        github_token=get_input(environ, "github-token"),
        fail_on=get_fail_on(environ),
        working_directory=get_input(environ, "working-directory"),
    )
