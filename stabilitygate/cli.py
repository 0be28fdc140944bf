"""The `stabilitygate` command (docs/design.md §3): parse flags, call the library, map errors to exit codes.

Nothing heavy is imported here: `--help` and `validate` must stay fast and never load torch.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import click

from stabilitygate.errors import EXIT_BAD_INPUT, EXIT_CANNOT_MEASURE, BadInput
from stabilitygate.failures import Failure, guarded, sigterm_interrupts
from stabilitygate.judge.fail_on import FAIL_ON_CHOICES
from stabilitygate.log import log_to_stderr
from stabilitygate.pipeline.options import DEFAULT_SUITE, STARTER_PROVIDERS, Shard, StarterProvider
from stabilitygate.version import __version__

if TYPE_CHECKING:
    from stabilitygate.report.files import ReportFiles
    from stabilitygate.report.model import Report

Command = TypeVar("Command", bound=Callable[..., None])
Flags: TypeAlias = dict[str, Any]  # click's parsed flags: untyped where they enter

PathArg = click.Path(path_type=Path, dir_okay=False)
#: The suite argument of every command: optional, `.stability/suite.yml` as in the Action.
SUITE_ARG = click.argument("suite", type=PathArg, required=False, default=Path(DEFAULT_SUITE))
ACCEPT_SUITE = click.option(
    "--accept-baseline-suite",
    metavar="NAME",
    help="Compare with a baseline recorded for the suite NAME (a renamed suite); else that is exit 2.",
)


def _report_flags(func: Command) -> Command:
    """The baseline and report flags shared by run, score and merge."""
    flags = [
        click.option("--baseline", type=PathArg, help="Baseline file (default: SUITE with .baseline.json)."),
        click.option("--update-baseline", is_flag=True, help="Record this run as the new baseline."),
        ACCEPT_SUITE,
        click.option("--report-json", type=PathArg, help="Write the report JSON here."),
        click.option("--markdown", type=PathArg, help="Write the Markdown report (the PR comment) here."),
        click.option("--junit", type=PathArg, help="Write JUnit XML here."),
        click.option(
            "--fail-on",
            type=click.Choice(FAIL_ON_CHOICES),
            default="regression",
            show_default=True,
            help="regression: threshold failures and regressions fail; fail: only threshold failures; "
            "warn: warnings too; never: report only.",
        ),
    ]
    for flag in reversed(flags):
        func = flag(func)
    return func


def _judging(kwargs: Flags) -> Flags:
    """The library's judging keywords, taken out of the parsed flags."""
    return {key: kwargs.pop(key) for key in ("baseline", "update_baseline", "fail_on", "accept_baseline_suite")}


def _report_files(kwargs: Flags) -> ReportFiles:
    from stabilitygate.report.files import ReportFiles

    return ReportFiles(kwargs.pop("report_json"), kwargs.pop("markdown"), kwargs.pop("junit"))


def _finish(report: Report, files: ReportFiles) -> None:
    """Write the report files, print the summary, exit with the report's code."""
    from stabilitygate.report.console import summary_lines
    from stabilitygate.report.files import write_report_files

    write_report_files(report, files)
    for line in summary_lines(report):
        click.echo(line, err=True)
    raise SystemExit(report.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="stabilitygate")
def cli() -> None:
    """Measure how non-deterministic an LLM feature is, and fail when its stability regresses."""


@cli.command()
@SUITE_ARG
def validate(suite: Path) -> None:
    """Check a suite file and exit (0 valid, 2 not)."""
    from stabilitygate.cases import environment_problems, load_suite
    from stabilitygate.judge.wording import counted

    loaded = load_suite(_existing(suite))
    cases = loaded.resolved_cases()
    click.echo(f"{suite}: valid ({counted(len(cases), 'case')}, {counted(sum(c.samples for c in cases), 'sample')})")
    for problem in environment_problems(loaded):  # the file is valid; the run would stop at the first
        click.echo(f"stabilitygate: warning: {problem}: `run` stops with exit 2 until it is", err=True)


@cli.command()
@SUITE_ARG
@click.option("--baseline", type=PathArg, help="Baseline file (default: SUITE with .baseline.json).")
@click.option("--update-baseline", is_flag=True, help="Plan the recording of a baseline instead of a run.")
@click.option("--samples", type=click.IntRange(min=2), help="Samples per case (overrides the suite).")
@ACCEPT_SUITE
def plan(
    suite: Path, baseline: Path | None, update_baseline: bool, samples: int | None, accept_baseline_suite: str | None
) -> None:
    """Print the requests, tokens and detectable drop of each case, and the thresholds inside the noise (exit 0)."""
    from stabilitygate.pipeline.plan import plan_suite

    planned = plan_suite(
        _existing(suite),
        baseline=baseline,
        update_baseline=update_baseline,
        samples=samples,
        accept_baseline_suite=accept_baseline_suite,
    )
    for line in planned.lines():
        click.echo(line)


@cli.command()
@SUITE_ARG
@_report_flags
@click.option("--samples", type=click.IntRange(min=2), help="Samples per case (overrides the suite).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Requests in flight (overrides the suite).")
@click.option("--case", "case_ids", multiple=True, metavar="ID", help="Run only this case (repeatable).")
@click.option("--shard", metavar="K/N", help="Run the K-th of N balanced shares of the cases.")
@click.option("--samples-out", type=PathArg, help="Append each sample to this JSONL file as it arrives.")
@click.option("--progress/--no-progress", default=None, help="Progress display (default: bar on a terminal).")
@click.option("--early-stop/--no-early-stop", default=None, help="Stop a case once it has certainly failed.")
@click.option(
    "--changed-only",
    is_flag=True,
    help="Sample only cases that are new or changed since the baseline; the others keep their baseline figures.",
)
@click.option(
    "--variants",
    is_flag=True,
    help="Also measure each case's variants beside it, with the same sampling (reported, never judged).",
)
def run(suite: Path, **kwargs: object) -> None:
    """Sample every case N times, measure, judge against the baseline and report."""
    from stabilitygate import api

    flags: Flags = kwargs
    files = _report_files(flags)
    report = api.run(
        _existing(suite),
        **_judging(flags),
        samples=flags["samples"],
        concurrency=flags["concurrency"],
        cases=tuple(flags["case_ids"]),
        shard=Shard.parse(flags["shard"], name="--shard") if flags["shard"] else None,
        early_stop=flags["early_stop"],
        samples_out=flags["samples_out"],
        progress=flags["progress"],
        changed_only=flags["changed_only"],
        variants=flags["variants"],
    )
    _finish(report, files)


@cli.command()
@click.argument("samples", type=PathArg, nargs=-1, required=True)
@click.option(
    "--suite",
    "suite",
    type=PathArg,
    default=Path(DEFAULT_SUITE),
    show_default=True,
    help="The suite the samples were drawn for.",
)
@_report_flags
def score(samples: Sequence[Path], suite: Path, **kwargs: object) -> None:
    """Measure, judge and report from samples files of an earlier run, calling no model."""
    from stabilitygate import api

    files = _report_files(kwargs)
    _finish(api.score(list(samples), suite=_existing(suite), **_judging(kwargs)), files)


@cli.command()
@click.argument("reports", type=PathArg, nargs=-1, required=True)
@click.option("--suite", "suite", type=PathArg, help="The suite (default: the path the reports name).")
@_report_flags
def merge(reports: Sequence[Path], suite: Path | None, **kwargs: object) -> None:
    """Join the reports of `run --shard K/N` jobs into one report, comment and exit code."""
    from stabilitygate import api

    files = _report_files(kwargs)
    _finish(api.merge(list(reports), suite=suite, **_judging(kwargs)), files)


@cli.command()
@click.option(
    "--provider",
    type=click.Choice(STARTER_PROVIDERS),
    help="The starter suite's provider (default: openai when OPENAI_API_KEY is set, else anthropic when "
    "ANTHROPIC_API_KEY is, else the embedded local model).",
)
def init(provider: StarterProvider | None) -> None:
    """Write a commented starter suite and the pull-request and baseline workflows (nothing is overwritten)."""
    from stabilitygate.pipeline.starter import starter, write_starter

    chosen = starter(os.environ, provider)
    written = write_starter(Path.cwd(), chosen)  # all or nothing: exit 2 before any file when one exists
    click.echo(f"stabilitygate: provider {chosen.provider} ({chosen.why})")
    for path in written:
        click.echo(f"wrote {path.relative_to(Path.cwd())}")
    for line in chosen.next_steps():
        click.echo(line)


def _existing(suite: Path) -> Path:
    """The suite path; the default one, when missing, is bad input that says how to get one."""
    if suite == Path(DEFAULT_SUITE) and not suite.exists():
        raise BadInput(
            "no such file (the default suite path: give the suite's path, or `stabilitygate init` writes a "
            "starter suite there)",
            path=DEFAULT_SUITE,
        )
    return suite


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code; whatever stops it is one line on stderr."""
    log_to_stderr()
    with sigterm_interrupts():  # SIGTERM at any stage ends like Ctrl-C: "interrupted", exit 3
        outcome = guarded(lambda: _click_main(argv), _say_failure)
    return outcome.code if isinstance(outcome, Failure) else outcome


def _click_main(argv: Sequence[str] | None) -> int:
    """click's own ends (usage errors, --help, --version) as exit codes; anything else propagates."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="stabilitygate", standalone_mode=False)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_BAD_INPUT)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        click.echo(f"stabilitygate: error: {_usage_line(exc)}", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        click.echo(f"stabilitygate: error: {' '.join(exc.format_message().split())}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("stabilitygate: aborted", err=True)
        return EXIT_CANNOT_MEASURE
    return 0


def _usage_line(exc: click.UsageError) -> str:
    """click's usage error as one line, like every other error, with where to read the usage."""
    message = " ".join(exc.format_message().split())
    command = exc.ctx.command_path if exc.ctx is not None else "stabilitygate"
    return f"{message.removesuffix('.')}; see {command} --help"


def _say_failure(failure: Failure) -> None:
    click.echo(f"stabilitygate: {failure.line}", err=True)
    if failure.traceback:
        click.echo(failure.traceback, err=True)


if __name__ == "__main__":
    sys.exit(main())
