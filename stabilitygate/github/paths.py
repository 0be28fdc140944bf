"""Every path the Action reads or writes stays inside the workspace (docs/design.md §9).

The inputs come from the workflow file, which a pull request can change: a `suite: ../../etc/x`,
a symlinked baseline or a `comment-from` pointing at another job's files must not make the
privileged job read or write outside the checkout. Paths are resolved, symlinks included, and
checked against the resolved workspace. Under `.stabilitygate/`, where the job writes as root, no
link (symbolic or hard) and nothing but files and directories may stand at all (docs/design.md §15).
"""

from __future__ import annotations

import os
import stat
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


def refuse_links(directory: Path, workspace: Path) -> None:
    """BadInput naming the first entry at or under `directory` that is a symbolic link, a file with
    other hard links, or neither a file nor a directory: the job writes there (reports, samples,
    judgments, cache entries) and must not be pointed at a file outside the workspace."""
    for path, info in _entries(directory):
        why = _unsafe(info)
        if why is not None:
            shown = path.relative_to(workspace).as_posix() if path.is_relative_to(workspace) else str(path)
            raise BadInput(
                f"{shown!r} is {why}: the Action writes under {directory.name}/ and follows no link there; "
                "remove it from the repository (or the restored cache)"
            )


def _entries(directory: Path) -> list[tuple[Path, os.stat_result]]:
    """`directory` and everything under it, links not followed, each with its lstat."""
    try:
        found = [(directory, directory.lstat())]
    except FileNotFoundError:
        return []
    todo = [directory] if stat.S_ISDIR(found[0][1].st_mode) else []
    while todo:
        with os.scandir(todo.pop()) as listing:
            for entry in listing:
                info = entry.stat(follow_symlinks=False)
                found.append((Path(entry.path), info))
                if stat.S_ISDIR(info.st_mode):
                    todo.append(Path(entry.path))
    return found


def _unsafe(info: os.stat_result) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link"
    if stat.S_ISREG(info.st_mode):
        return "a hard link to another file" if info.st_nlink > 1 else None
    return None if stat.S_ISDIR(info.st_mode) else "neither a file nor a directory"
