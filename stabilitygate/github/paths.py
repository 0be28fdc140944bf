"""Every path the Action reads or writes stays inside the workspace (docs/design.md §9).

The inputs come from the workflow file, which a pull request can change: a `suite: ../../etc/x`,
a symlinked baseline or a `comment-from` pointing at another job's files must not make the
privileged job read or write outside the checkout. Paths are resolved, symlinks included, and
checked against the resolved workspace.
"""

from __future__ import annotations

from pathlib import Path

from stabilitygate.errors import BadInput
from stabilitygate.github.gate import GateFiles
from stabilitygate.github.inputs import ActionInputs
from stabilitygate.pipeline.options import default_baseline_path


def workspace_of(given: str) -> Path:
    """The resolved workspace; BadInput when it is not a directory."""
    workspace = Path(given).resolve()
    if not workspace.is_dir():
        raise BadInput(f"GITHUB_WORKSPACE {given!r} is not a directory")
    return workspace


def confined(workspace: Path, base: Path, given: str | Path, *, named: str) -> Path:
    """`given` (relative to `base`) resolved, symlinks included; BadInput naming `named` when it
    resolves outside `workspace` (which must be resolved already)."""
    path = (base / given).resolve()
    if not path.is_relative_to(workspace):
        shown = str(given)
        where = "" if shown == str(path) else f" (resolved: {str(path)!r})"
        raise BadInput(f"{named}: {shown!r}{where} is outside the workspace {str(workspace)!r}")
    return path


def working_directory(workspace: Path, given: str | None) -> Path:
    """Input `working-directory`, resolved inside the workspace (the workspace itself by default)."""
    if not given:
        return workspace
    path = confined(workspace, workspace, given, named="input `working-directory`")
    if not path.is_dir():
        raise BadInput(f"input `working-directory`: {given!r} is not a directory in the workspace")
    return path


def confine_inputs(inputs: ActionInputs, workspace: Path, workdir: Path, files: GateFiles) -> None:
    """The suite, the baseline (given, or beside the suite), `comment-from` and every file the job
    writes resolve inside the workspace; else BadInput naming the input."""
    if inputs.comment_from:
        confined(workspace, workdir, inputs.comment_from, named="input `comment-from`")
        return
    confined(workspace, workdir, inputs.suite, named="input `suite`")
    baseline = inputs.baseline or default_baseline_path(Path(inputs.suite))
    named = "input `baseline`" if inputs.baseline else "the baseline beside the suite"
    confined(workspace, workdir, baseline, named=named)
    outputs = [files.report_json.parent, *files.all()]
    if not inputs.embedding_cache:  # a cache directory of the workflow's own choosing is its business
        outputs.append(files.embedding_cache)
    for path in outputs:
        confined(workspace, workspace, path.relative_to(workspace), named="output")
