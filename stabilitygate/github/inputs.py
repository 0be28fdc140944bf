"""The Action's inputs, read from `INPUT_<NAME>` as the runner passes them to a container action.

The runner upper-cases the input name and keeps its hyphens (`update-baseline` ->
`INPUT_UPDATE-BASELINE`). Defaults mirror action.yml, so a bare `docker run` behaves like the Action.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from stabilitygate.errors import BadInput
from stabilitygate.judge.fail_on import FAIL_ON_CHOICES, FailOn
from stabilitygate.metrics import MAX_SAMPLES
from stabilitygate.pipeline.options import DEFAULT_SUITE, Shard
from stabilitygate.suite.sizes import checked_samples

#: The workflow may point the embedding cache elsewhere ("off": none); default .stabilitygate/embeddings.
CACHE_ENV = "STABILITYGATE_CACHE_DIR"
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
    shard: Shard | None = None  # this job runs the K-th of N shares of the suite
    merge: tuple[str, ...] = ()  # glob patterns of the shard reports this job joins
    changed_only: bool = False  # sample only the cases changed since the baseline
    comment_from: str | None = None  # post the comment from this report.json, run nothing
    pr_number: int | None = None  # the pull request to comment on when the event names none
    embedding_cache: str | None = None  # from STABILITYGATE_CACHE_DIR; None: .stabilitygate/embeddings
    accept_baseline_suite: str | None = None  # compare with a baseline recorded under this suite name
    variants: bool = False  # also measure each case's variants (reported, never judged)


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
    """The input `samples`, held to the suite's own bounds before anything is drawn (docs/design.md §15)."""
    value = get_input(environ, "samples")
    if value is None:
        return None
    if value.isascii() and value.isdigit() and len(value) > len(str(MAX_SAMPLES)):  # 5,000 digits: not parsed
        raise BadInput(f"input `samples`: a number of {len(value):,} digits: expected 2 to {MAX_SAMPLES:,}")
    try:
        number = int(value, 10)
    except ValueError as exc:
        raise BadInput(f"input `samples`: expected a whole number of at least 2, got {value!r:.40}") from exc
    if number < 2:
        raise BadInput(f"input `samples`: expected a whole number of at least 2, got {number}")
    return checked_samples(number, named="input `samples`")


def get_fail_on(environ: Mapping[str, str]) -> FailOn:
    value = get_input(environ, "fail-on") or "regression"
    for choice in FAIL_ON_CHOICES:
        if value == choice:
            return choice
    raise BadInput(f"input `fail-on`: expected one of {', '.join(FAIL_ON_CHOICES)}, got {value!r}")


def get_shard(environ: Mapping[str, str]) -> Shard | None:
    value = get_input(environ, "shard")
    return None if value is None else Shard.parse(value, name="input `shard`")


def get_pr_number(environ: Mapping[str, str]) -> int | None:
    value = get_input(environ, "pr-number")
    if value is None:
        return None
    if not re.fullmatch(r"[1-9][0-9]{0,9}", value):
        raise BadInput(f"input `pr-number`: expected the number of a pull request, such as 42, got {value!r}")
    return int(value)


def get_merge(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The `merge` patterns: one per line, blank lines ignored."""
    value = get_input(environ, "merge") or ""
    return tuple(line.strip() for line in value.splitlines() if line.strip())


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    """Every input, checked; a bad value raises BadInput (exit 2) naming the input."""
    inputs = ActionInputs(
        suite=get_input(environ, "suite") or DEFAULT_SUITE,
        baseline=get_input(environ, "baseline"),
        samples=get_samples(environ),
        update_baseline=get_bool(environ, "update-baseline", False),
        comment=get_bool(environ, "comment", True),
        github_token=get_input(environ, "github-token"),
        fail_on=get_fail_on(environ),
        working_directory=get_input(environ, "working-directory"),
        shard=get_shard(environ),
        merge=get_merge(environ),
        changed_only=get_bool(environ, "changed-only", False),
        comment_from=get_input(environ, "comment-from"),
        pr_number=get_pr_number(environ),
        embedding_cache=environ.get(CACHE_ENV),
        accept_baseline_suite=get_input(environ, "accept-baseline-suite"),
        variants=get_bool(environ, "variants", False),
    )
    if inputs.shard is not None and inputs.merge:
        raise BadInput(
            "inputs `shard` and `merge` exclude each other: each shard job runs one share of the suite, "
            "then one job merges their reports"
        )
    if inputs.comment_from and (inputs.merge or inputs.shard is not None or inputs.update_baseline):
        raise BadInput(
            "input `comment-from` posts the comment of an existing report: it runs nothing, so it goes without "
            "`shard`, `merge` and `update-baseline`"
        )
    if inputs.variants and (inputs.merge or inputs.comment_from):
        raise BadInput("input `variants` measures variants while sampling: it goes without `merge` and `comment-from`")
    if inputs.merge and inputs.samples is not None:
        raise BadInput("input `samples` does not apply with `merge`: set it on the shard jobs, which take the samples")
    return inputs


def match_reports(patterns: Sequence[str], directory: Path) -> list[str]:
    """The files the `merge` patterns match (recursive `**`), relative to `directory`, sorted, each once.

    Nothing matched at all is bad input naming the patterns: most often the shard jobs failed or
    their artifacts were downloaded somewhere else.
    """
    found: set[str] = set()
    for pattern in patterns:
        for match in glob.glob(pattern, root_dir=directory, recursive=True):
            if (directory / match).is_file():
                found.add(os.path.normpath(match))
    if not found:
        shown = " or ".join(f"`{p}`" for p in patterns)
        raise BadInput(
            f"input `merge`: {shown} matches no file under {str(directory)!r}; did the shard jobs fail, "
            "or were their artifacts downloaded elsewhere?"
        )
    return sorted(found)
