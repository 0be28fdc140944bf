"""The GitHub Action: INPUT_* variables in, the gate run, then annotations, summary, outputs, comment.

The gate's exit code is the action's exit code, whatever happens to the comment or the summary:
those are reporting, and a reporting failure becomes a warning, never a different verdict.

A big suite spreads over a matrix: each `shard: K/N` job runs its share and only reports it (its
verdict is provisional, so no comment and no annotations), then one `merge` job joins the shards'
reports and does everything a whole run does.

The pieces: `gate` runs the command line, `reporting` turns its report into annotations, summary,
outputs and comment, `shards` handles a matrix's shard and merge jobs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from stabilitygate import TOOL_NAME
from stabilitygate.errors import BadInput
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.gate import GateFiles, gate_argv, run_gate
from stabilitygate.github.inputs import ActionInputs, read_inputs
from stabilitygate.github.ownership import give_back
from stabilitygate.github.reporting import SuiteInfo, report_run
from stabilitygate.github.shards import announce_shard, merge_inputs, merge_problem, report_shard

# Variables whose values look like credentials are masked even when the suite cannot be read.
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_HEURISTIC_SECRET = 8
CACHE_ENV = "STABILITYGATE_CACHE_DIR"


def main(environ: Mapping[str, str]) -> int:
    """Run the action; return the gate's exit code (0 pass, 1 fail, 2 bad input, 3 could not measure).

    `environ` supplies the action's inputs and the runner's GITHUB_* variables; the gate's providers
    read API keys from the process environment as usual.
    """
    hidden = _mask_token(environ)
    try:
        inputs = read_inputs(environ)
        workspace = Path(environ.get("GITHUB_WORKSPACE") or os.getcwd()).resolve()
        workdir = _working_directory(workspace, inputs.working_directory)
        files = GateFiles.under(workspace, inputs.shard)
        reports = merge_inputs(inputs, workdir, files)
    except BadInput as exc:
        wc.error(str(exc), title=f"{TOOL_NAME}: bad input")
        return exc.exit_code
    os.chdir(workdir)
    suite = _prepare_suite(inputs.suite, environ, workspace, hidden)
    cache = _embedding_cache(environ, files)
    started = time.time()
    for stale in files.all():  # an earlier step's report must never be read as this run's
        stale.unlink(missing_ok=True)
    try:
        if inputs.shard is not None:
            announce_shard(inputs.shard, inputs.update_baseline)
        problem = merge_problem(reports, suite.name if suite else None) if inputs.merge else None
        if problem is not None:
            wc.error(str(problem), title=f"{TOOL_NAME}: cannot merge the shards")
            code, tail = problem.exit_code, [f"{TOOL_NAME}: error: {problem}"]
        else:
            code, tail = run_gate(gate_argv(inputs, files, reports))
        if inputs.shard is not None:
            code = report_shard(inputs.shard, environ, files, code, tail, hidden)
        else:
            report_run(inputs, environ, files, code, tail, suite, hidden)
    finally:
        _give_back_files(files, inputs, cache, started)
    return code


def _mask_token(environ: Mapping[str, str]) -> list[str]:
    hidden: list[str] = []
    token = (environ.get("INPUT_GITHUB-TOKEN") or "").strip()
    if token:
        wc.add_mask(token)
        hidden.append(token)
    for name, value in environ.items():
        looks_secret = name.upper().endswith(SECRET_SUFFIXES) and len(value.strip()) >= MIN_HEURISTIC_SECRET
        if looks_secret and value not in hidden:
            wc.add_mask(value)
            hidden.append(value)
    return hidden


def _working_directory(workspace: Path, given: str | None) -> Path:
    if not workspace.is_dir():
        raise BadInput(f"GITHUB_WORKSPACE {str(workspace)!r} is not a directory")
    if not given:
        return workspace
    path = (workspace / given).resolve()
    if not path.is_dir():
        raise BadInput(f"input `working-directory`: {given!r} is not a directory in the workspace")
    return path


def _prepare_suite(suite: str, environ: Mapping[str, str], workspace: Path, hidden: list[str]) -> SuiteInfo | None:
    """Mask the suite's API keys and learn each case's line; None when the suite cannot be read.

    A suite that cannot be read is annotated at its line here; the gate itself then reports it
    (exit 2) with the same message.
    """
    from stabilitygate.suite.load import load_suite

    shown = _workspace_relative(Path(suite), workspace)
    try:
        loaded = load_suite(suite)
        names = loaded.secret_env_names()
        lines = {case.id: case.line for case in loaded.resolved_cases() if case.line is not None}
    except BadInput as exc:
        message = str(exc).removeprefix(f"{exc.path}:{exc.line}: ").removeprefix(f"{exc.path}: ")
        wc.error(message, file=shown, line=exc.line, title=f"{TOOL_NAME}: invalid suite")
        return None
    for name in sorted(names):
        value = environ.get(name) or os.environ.get(name)
        if value and value not in hidden:
            wc.add_mask(value)
            hidden.append(value)
    return SuiteInfo(shown, lines, loaded.suite.name)


def _workspace_relative(path: Path, workspace: Path) -> str:
    """The path as annotations need it: relative to the repository root (the workspace)."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)


def _embedding_cache(environ: Mapping[str, str], files: GateFiles) -> Path | None:
    """Where the embedding cache goes: in the workspace unless the workflow says otherwise.

    The container's HOME is the runner's temp directory, where root-owned files outlive nothing
    useful and can trouble a self-hosted runner's cleanup; in .stabilitygate/ they are given back
    to the workspace owner, and actions/cache can keep them between runs.
    """
    setting = environ.get(CACHE_ENV)
    if setting is None:
        cache = files.report_json.parent / "embeddings"
        os.environ[CACHE_ENV] = str(cache)
        return cache
    if setting.strip().lower() in ("", "off", "none", "false", "0", "no"):
        return None
    return Path(os.path.abspath(Path(setting).expanduser()))


def _give_back_files(files: GateFiles, inputs: ActionInputs, cache: Path | None, started: float) -> None:
    from stabilitygate.pipeline.options import default_baseline_path

    baseline = Path(inputs.baseline) if inputs.baseline else default_baseline_path(Path(inputs.suite))
    written = [files.report_json.parent, baseline, *([cache] if cache is not None else [])]
    try:
        give_back(written, files.workspace, since=started)
    except OSError as exc:
        wc.warning(f"could not give the written files back to the workspace owner: {exc}", title=TOOL_NAME)
