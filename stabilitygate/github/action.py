"""The GitHub Action: INPUT_* variables in, the gate run, then annotations, summary, outputs, comment.

The gate's exit code is the action's exit code, whatever happens to the comment or the summary:
those are reporting, and a reporting failure becomes a warning, never a different verdict.

A big suite spreads over a matrix: each `shard: K/N` job runs its share and only reports it (its
verdict is provisional, so no comment and no annotations), then one `merge` job joins the shards'
reports and does everything a whole run does.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from stabilitygate import TOOL_NAME
from stabilitygate.errors import EXIT_BAD_INPUT, EXIT_CANNOT_MEASURE, BadInput, GateError
from stabilitygate.github import workflow_commands as wc
from stabilitygate.github.comments import (
    DEFAULT_API_URL,
    CommentError,
    CommentForbidden,
    GitHubClient,
    upsert_sticky_comment,
)
from stabilitygate.github.event import pull_request_number, repository
from stabilitygate.github.inputs import ActionInputs, match_reports, read_inputs
from stabilitygate.github.ownership import give_back
from stabilitygate.pipeline.options import Shard

OUT_DIR = ".stabilitygate"
FAILING_VERDICTS = ("fail", "regressed", "error")
MAX_ANNOTATIONS_PER_LEVEL = 10  # GitHub shows at most 10 of each level per step
FORK_HINT = (
    "This is expected on a pull request from a fork: its GITHUB_TOKEN is read-only, whatever the "
    "workflow's permissions say. The job summary was written. To comment on fork pull requests, use the "
    "fork-safe pair of workflows from the README (docs/workflows/stability-fork-safe.yml uploads the "
    "report, docs/workflows/stability-comment.yml posts it from a workflow_run)."
)
# Variables whose values look like credentials are masked even when the suite cannot be read.
SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_HEURISTIC_SECRET = 8
CACHE_ENV = "STABILITYGATE_CACHE_DIR"
# A shard's exit code says only whether it measured; the merge job gates.
SHARD_PASSES = (0, 1)


class SuiteInfo(NamedTuple):
    """What the Action learns from the suite before the gate runs."""

    shown: str  # the path as annotations need it, from the repository root
    lines: dict[str, int]  # case id -> its line in the suite
    name: str


@dataclass(frozen=True)
class GateFiles:
    """The files the gate writes, absolute, and as later steps see them (relative to the workspace)."""

    workspace: Path
    report_json: Path
    markdown: Path
    junit: Path
    samples: Path

    @classmethod
    def under(cls, workspace: Path, shard: Shard | None = None) -> GateFiles:
        """`.stabilitygate/`, or for a shard `.stabilitygate/shard-K-of-N/`, which an artifact upload can take."""
        out = workspace / OUT_DIR
        if shard is not None:
            out = out / f"shard-{shard.index}-of-{shard.count}"
        return cls(workspace, out / "report.json", out / "report.md", out / "junit.xml", out / "samples.jsonl")

    def all(self) -> tuple[Path, ...]:
        return (self.report_json, self.markdown, self.junit, self.samples)

    def shown(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix()


class _Tee:
    """Passes writes through to a stream and keeps the last lines (for the summary of a failed run)."""

    def __init__(self, stream: TextIO, keep: int = 40) -> None:
        self.stream = stream
        self.keep = keep
        self.lines: list[str] = []
        self._partial = ""

    def write(self, text: str) -> int:
        self.stream.write(text)
        parts = (self._partial + text).split("\n")
        self._partial = parts.pop()
        self.lines = (self.lines + parts)[-self.keep :]
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def tail(self) -> list[str]:
        return [*self.lines, self._partial] if self._partial else list(self.lines)


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
        reports = _merge_inputs(inputs, workdir, files)
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
            _announce_shard(inputs.shard, inputs.update_baseline)
        problem = _merge_problem(reports, suite.name if suite else None) if inputs.merge else None
        if problem is not None:
            wc.error(str(problem), title=f"{TOOL_NAME}: cannot merge the shards")
            code, tail = problem.exit_code, [f"{TOOL_NAME}: error: {problem}"]
        else:
            code, tail = _run_gate(_gate_argv(inputs, files, reports))
        if inputs.shard is not None:
            code = _report_shard(inputs.shard, environ, files, code, tail, hidden)
        else:
            _report(inputs, environ, files, code, tail, suite, hidden)
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


def _merge_inputs(inputs: ActionInputs, workdir: Path, files: GateFiles) -> list[str]:
    """The shard reports `merge` names, relative to the working directory (none unless merging)."""
    if not inputs.merge:
        return []
    ours = {path.resolve() for path in files.all()}  # a broad glob must not take an earlier merge's report
    found = [path for path in match_reports(inputs.merge, workdir) if (workdir / path).resolve() not in ours]
    if not found:
        raise BadInput(f"input `merge`: {' or '.join(inputs.merge)} matches only this job's own report files")
    return found


def _shard_label(report: Mapping[str, Any]) -> str | None:
    run = report.get("run")
    sampling = run.get("sampling") if isinstance(run, dict) else None
    label = sampling.get("shard") if isinstance(sampling, dict) else None
    return str(label) if label else None


def _merge_problem(paths: Sequence[str], suite_name: str | None) -> GateError | None:
    """Why these reports cannot make one report of the whole suite; None when they can."""
    from stabilitygate.pipeline.score import check_shards

    reports = [(Path(p), r) for p in paths if (r := _read_report(Path(p))) is not None]
    # unreadable files are left to the merge itself, which names them (exit 2)
    for path, report in reports:
        suite = report.get("suite")
        name = suite.get("name") if isinstance(suite, dict) else None
        if suite_name is not None and name != suite_name:
            return BadInput(
                f"{path} reports on suite {name!r}, but input `suite` is {suite_name!r}: give the merge job "
                "the suite and working-directory of the shard jobs"
            )
    try:
        check_shards(reports)
    except GateError as exc:
        return exc
    return None


def _gate_argv(inputs: ActionInputs, files: GateFiles, reports: Sequence[str] = ()) -> list[str]:
    argv = [
        "merge" if inputs.merge else "run",
        "--report-json",
        str(files.report_json),
        "--markdown",
        str(files.markdown),
        "--junit",
        str(files.junit),
        "--fail-on",
        inputs.fail_on,
    ]
    if inputs.baseline:
        argv += ["--baseline", inputs.baseline]
    if inputs.update_baseline and inputs.shard is None:  # a shard's share is recorded by the merge job
        argv.append("--update-baseline")
    if inputs.merge:
        # `--` ends the options, so no path is ever read as a flag.
        return [*argv, "--suite", inputs.suite, "--", *reports]
    argv += ["--samples-out", str(files.samples), "--no-progress"]
    if inputs.samples is not None:
        argv += ["--samples", str(inputs.samples)]
    if inputs.shard is not None:
        argv += ["--shard", str(inputs.shard)]
    return [*argv, "--", inputs.suite]


def _run_gate(argv: Sequence[str]) -> tuple[int, list[str]]:
    """Run the command line, model text unable to issue workflow commands; return (code, stderr tail)."""
    from stabilitygate.cli import main as cli_main

    # Completions are untrusted: while the gate runs, `::` lines in its output are not commands.
    pause = secrets.token_hex(16)
    print(f"::stop-commands::{pause}", flush=True)
    tee = _Tee(sys.stderr)
    try:
        with contextlib.redirect_stderr(tee):
            code = cli_main(list(argv))
    except Exception as exc:  # the CLI maps its own errors; this is a last line of defence
        print(f"{TOOL_NAME}: internal error: {type(exc).__name__}: {exc}", file=tee)
        code = EXIT_CANNOT_MEASURE
    finally:
        sys.stderr.flush()
        print(f"::{pause}::", flush=True)
    return code, tee.tail()


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _failing_cases(report: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if report is None:
        return []
    cases = report.get("cases")
    if not isinstance(cases, list):
        return []
    return [c for c in cases if isinstance(c, dict) and c.get("verdict") in FAILING_VERDICTS]


def _annotate(failing: Sequence[Mapping[str, Any]], code: int, fail_on: str, suite: SuiteInfo | None) -> None:
    shown, lines = (suite.shown, suite.lines) if suite else (None, {})
    emitted = {"error": 0, "warning": 0}
    for case in failing:
        verdict = str(case.get("verdict"))
        gated = code != 0 and (verdict != "regressed" or fail_on == "regression")
        level = "error" if gated else "warning"
        if emitted[level] >= MAX_ANNOTATIONS_PER_LEVEL:
            continue
        emitted[level] += 1
        line = case.get("line") if isinstance(case.get("line"), int) else lines.get(str(case.get("id")))
        reasons = [str(r) for r in case.get("reasons") or []]
        wc.annotation(
            level,
            "; ".join(reasons) or f"the case's verdict is {verdict}",
            file=shown,
            line=line if shown else None,
            title=f"{TOOL_NAME}: case {case.get('id')} {verdict}",
        )
    hidden = len(failing) - sum(emitted.values())
    if hidden > 0:
        wc.annotation("notice", f"{hidden} more cases did not pass; the job summary lists them all")


def _redact(text: str, hidden: Sequence[str]) -> str:
    for value in sorted(hidden, key=len, reverse=True):
        text = text.replace(value, "***")
    return text


def _fallback_summary(code: int, tail: Sequence[str], hidden: Sequence[str]) -> str:
    """A summary for a run that wrote no Markdown report (bad input, could not measure)."""
    what = "bad input" if code == EXIT_BAD_INPUT else "could not measure"
    lines = [line for line in tail if line.strip() and not line.startswith("::")][-15:]
    body = _redact("\n".join(lines), hidden)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}\n{body}\n{fence}\n" if body else ""
    return (
        f"## {TOOL_NAME}: error\n\nThe gate stopped with exit code {code} ({what}); no report was written.\n\n{block}"
    )


def _report(
    inputs: ActionInputs,
    environ: Mapping[str, str],
    files: GateFiles,
    code: int,
    tail: Sequence[str],
    suite: SuiteInfo | None,
    hidden: Sequence[str],
) -> None:
    report = _read_report(files.report_json)
    failing = _failing_cases(report)
    _annotate(failing, code, inputs.fail_on, suite)
    markdown = files.markdown.read_text(encoding="utf-8") if files.markdown.is_file() else None
    _write_summary(markdown if markdown is not None else _fallback_summary(code, tail, hidden), environ)
    _set_outputs(files, report, markdown, failing, environ)
    if markdown is not None and inputs.comment:
        _comment(markdown, inputs, environ)


def _announce_shard(shard: Shard, update_baseline: bool) -> None:
    print(
        f"{TOOL_NAME}: shard {shard}: this job measures its share of the suite only, so it posts no comment "
        "and no annotations, and fails only on bad input (exit 2) or when it cannot measure (exit 3). "
        "The job with input `merge` judges the whole suite and comments.",
        flush=True,
    )
    if update_baseline:
        print(f"{TOOL_NAME}: update-baseline: the merge job records the baseline; a shard leaves it alone", flush=True)


def _report_shard(
    shard: Shard, environ: Mapping[str, str], files: GateFiles, code: int, tail: Sequence[str], hidden: Sequence[str]
) -> int:
    """Summary and outputs of one shard; its exit code: 0 unless it had bad input (2) or could not measure (3)."""
    report = _read_report(files.report_json)
    markdown = files.markdown.read_text(encoding="utf-8") if files.markdown.is_file() else None
    note = (
        f"> **Shard {shard}** of the suite: the verdicts below are provisional. The merge job judges the "
        "whole suite (Holm's correction runs over every case) and posts the comment.\n\n"
    )
    _write_summary(note + (markdown if markdown is not None else _fallback_summary(code, tail, hidden)), environ)
    _set_outputs(files, report, markdown, _failing_cases(report), environ)
    return 0 if code in SHARD_PASSES else code


def _write_summary(text: str, environ: Mapping[str, str]) -> None:
    try:
        wc.append_step_summary(text, environ)
    except OSError as exc:
        wc.warning(f"could not write the job summary: {exc}", title=TOOL_NAME)


def _set_outputs(
    files: GateFiles,
    report: Mapping[str, Any] | None,
    markdown: str | None,
    failing: Sequence[Mapping[str, Any]],
    environ: Mapping[str, str],
) -> None:
    verdict = report.get("verdict") if report else None
    try:
        wc.set_outputs(
            {
                "verdict": str(verdict) if verdict in ("pass", "fail", "error") else "error",
                "report-json": files.shown(files.report_json) if report is not None else "",
                "report-markdown": files.shown(files.markdown) if markdown is not None else "",
                "failed-cases": ",".join(str(c.get("id")) for c in failing),
            },
            environ,
        )
    except OSError as exc:
        wc.warning(f"could not write the step outputs: {exc}", title=TOOL_NAME)


def _comment(markdown: str, inputs: ActionInputs, environ: Mapping[str, str]) -> None:
    number = pull_request_number(environ)
    repo = repository(environ)
    if number is None or repo is None:
        return
    if not inputs.github_token:
        wc.warning("no github-token: the pull-request comment was skipped", title=TOOL_NAME)
        return
    api_url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
    try:
        with GitHubClient(inputs.github_token, api_url=api_url) as client:
            result = upsert_sticky_comment(client, repo, number, markdown)
    except CommentForbidden as exc:
        wc.warning(f"could not comment on pull request #{number} ({exc}). {FORK_HINT}", title=TOOL_NAME)
        return
    except (CommentError, ValueError) as exc:
        wc.warning(f"could not comment on pull request #{number}: {exc}", title=TOOL_NAME)
        return
    print(f"{TOOL_NAME}: {result.action} the comment on pull request #{number}", flush=True)


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
