from __future__ import annotations

import functools
import io
import os
import re
import subprocess
import sys
import textwrap
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stabilitygate.github import workflow_commands as wc
from tests.support.github_outputs import read_outputs

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-stream-secret-0123456789"


def unescape(value: str) -> str:
    """What the runner does to a command's data and properties (ActionCommand.Unescape*)."""
    for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        value = value.replace(code, char)
    return value


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse `::name k=v,k=v::message` the way the runner does."""
    match = re.fullmatch(r"::([\w-]+)(?: ([^:]*))?::(.*)", line, flags=re.S)
    assert match, line
    props: dict[str, str] = {}
    if match[2]:
        for pair in match[2].split(","):
            key, _, value = pair.partition("=")
            props[key] = unescape(value)
    return match[1], props, unescape(match[3])


def test_error_annotation_with_file_line_and_title() -> None:
    out = io.StringIO()
    wc.annotation("error", "agreement 6/10", file=".stability/suite.yml", line=12, title="case x", stream=out)
    assert out.getvalue() == "::error file=.stability/suite.yml,line=12,title=case x::agreement 6/10\n"


def test_properties_escape_colon_comma_percent_and_newlines() -> None:
    line = wc.format_command("warning", "100% done\nnext: line\r", {"title": "a:b,c%d\ne"})
    assert "\n" not in line and "\r" not in line
    assert line == "::warning title=a%3Ab%2Cc%25d%0Ae::100%25 done%0Anext: line%0D"


@given(st.text(), st.text())
def test_escaping_round_trips_through_the_runner_parser(message: str, title: str) -> None:
    line = wc.format_command("error", message, {"file": "s.yml", "title": title or "t"})
    assert "\n" not in line and "\r" not in line
    name, props, parsed = parse_command(line)
    assert (name, props["title"], parsed) == ("error", title or "t", message)


def test_empty_properties_are_left_out() -> None:
    assert wc.format_command("error", "m", {"file": None, "line": None, "title": ""}) == "::error::m"


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError):
        wc.annotation("fatal", "x")


def test_add_mask_registers_the_value_and_each_line() -> None:
    out = io.StringIO()
    wc.add_mask("first-line-secret\nsecond-line-secret\n", stream=out)
    lines = out.getvalue().splitlines()
    assert lines == [
        "::add-mask::first-line-secret%0Asecond-line-secret",
        "::add-mask::first-line-secret",
        "::add-mask::second-line-secret",
    ]


def test_add_mask_skips_values_too_short_to_mask_sensibly() -> None:
    out = io.StringIO()
    wc.add_mask("ab", stream=out)
    assert out.getvalue() == ""


def test_add_mask_goes_to_both_streams_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    wc.add_mask(SECRET)
    captured = capsys.readouterr()
    assert captured.out == captured.err == f"::add-mask::{SECRET}\n"


# ---- stream order: the runner reads stdout and stderr on two threads, stderr first in each batch


@dataclass
class RunnerModel:
    """What the runner does with the lines it reads: commands, masks, stop-commands, the log."""

    paused_by: str | None = None
    masks: list[str] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def handle(self, line: str) -> None:
        if self.paused_by is not None:
            if line == f"::{self.paused_by}::":
                self.paused_by = None
            else:
                self.log.append(self.masked(line))
            return
        match = re.fullmatch(r"::([\w-]+)(?: [^:]*)?::(.*)", line)
        if match is None:
            self.log.append(self.masked(line))
        elif match[1] == "stop-commands":
            self.paused_by = match[2]
        elif match[1] == "add-mask":
            self.masks.append(unescape(match[2]))
        else:
            self.commands.append((match[1], unescape(match[2])))

    def masked(self, line: str) -> str:
        for value in self.masks:
            line = line.replace(value, "***")
        return line


def replay(stdout: Sequence[str], stderr: Sequence[str], picks: Sequence[bool]) -> RunnerModel:
    """Handle the lines in one interleaving: each stream keeps its own order, nothing orders the two."""
    queues = (deque(stdout), deque(stderr))
    runner = RunnerModel()
    for from_stderr in [*picks, *[True] * len(stderr), *[False] * len(stdout)]:
        queue = queues[from_stderr] if queues[from_stderr] else queues[not from_stderr]
        if queue:
            runner.handle(queue.popleft())
    return runner


GATE = textwrap.dedent(
    """
    import sys
    from stabilitygate.github import workflow_commands as wc

    secret = sys.argv[1]
    wc.add_mask(secret)
    print("the action starts", flush=True)
    with wc.commands_paused(sys.stderr):
        # Untrusted model text, on stderr like everything the gate prints while it runs.
        sys.stderr.write("::error::pwned by a completion\\n")
        sys.stderr.write("::add-mask::the\\n")
        sys.stderr.write(f"a completion that quotes {secret}\\n")
    wc.warning("after the gate", stream=sys.stderr)
    print(f"the action reports, naming {secret}", flush=True)
    wc.warning("the comment was skipped")
    """
)


@functools.cache
def gate_streams() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A real process's stdout and stderr, each captured through its own pipe."""
    done = subprocess.run(
        [sys.executable, "-c", GATE, SECRET],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=True,
    )
    return tuple(done.stdout.splitlines()), tuple(done.stderr.splitlines())


@settings(deadline=None)  # the first example starts the gate's process (then cached): no wall-clock bound
@given(st.lists(st.booleans(), max_size=24))
def test_guards_hold_in_every_order_the_runner_may_read_the_streams(picks: list[bool]) -> None:
    stdout, stderr = gate_streams()
    runner = replay(stdout, stderr, picks)
    assert ("error", "pwned by a completion") not in runner.commands
    assert runner.masks.count(SECRET) >= 1 and "the" not in runner.masks
    assert ("warning", "after the gate") in runner.commands  # on the resume token's stream, after it
    assert not any(SECRET in line for line in runner.log)
    assert "::error::pwned by a completion" in runner.log  # shown as text, not run as a command
    assert runner.paused_by is None


def test_the_runners_batch_order_handles_stderr_before_stdout() -> None:
    stdout, stderr = gate_streams()
    assert stderr[0] == f"::add-mask::{SECRET}" and stderr[1].startswith("::stop-commands::")
    assert stderr[-2] == stderr[1].replace("stop-commands::", "", 1) + "::"  # the resume token, on stderr
    assert stdout[0] == f"::add-mask::{SECRET}"
    runner = replay(stdout, stderr, [True] * len(stderr))  # one batch: all of stderr, then all of stdout
    assert runner.commands == [("warning", "after the gate"), ("warning", "the comment was skipped")]


def test_a_guard_on_the_other_stream_does_not_hold() -> None:
    # Why the guards follow the text: stop-commands on stdout, text on stderr, one batch -> commands run.
    out, err = io.StringIO(), io.StringIO()
    token = wc.stop_commands(out)
    err.write("::error::pwned\n")
    wc.resume_commands(token, out)
    runner = replay(out.getvalue().splitlines(), err.getvalue().splitlines(), [True])
    assert runner.commands == [("error", "pwned")]


def test_commands_paused_writes_both_tokens_to_its_stream_even_when_the_block_fails() -> None:
    guarded, other = io.StringIO(), io.StringIO()
    with pytest.raises(RuntimeError), wc.commands_paused(guarded) as token:
        guarded.write("model text\n")
        raise RuntimeError("the gate failed")
    assert guarded.getvalue() == f"::stop-commands::{token}\nmodel text\n::{token}::\n"
    assert re.fullmatch(r"[0-9a-f]{32}", token) and other.getvalue() == ""
    with wc.commands_paused(guarded) as second:
        pass
    assert second != token


def test_outputs_survive_multiline_values_and_lookalike_delimiters(tmp_path: Path) -> None:
    target = tmp_path / "output"
    tricky = "a\nghadelimiter_\nEOF\nb"
    assert wc.set_outputs({"verdict": "fail", "failed-cases": "x,y", "notes": tricky}, {"GITHUB_OUTPUT": str(target)})
    assert read_outputs(target) == {"verdict": "fail", "failed-cases": "x,y", "notes": tricky}


def test_delimiter_never_occurs_in_the_value(monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = iter(["aa", "bb"])
    monkeypatch.setattr(wc.secrets, "token_hex", lambda n: next(tokens))
    block = wc.format_output("x", "value with ghadelimiter_aa inside")
    assert block == "x<<ghadelimiter_bb\nvalue with ghadelimiter_aa inside\nghadelimiter_bb\n"


def test_output_name_is_checked() -> None:
    with pytest.raises(ValueError):
        wc.format_output("bad\nname", "v")


def test_no_runner_files_means_nothing_written(tmp_path: Path) -> None:
    assert wc.set_outputs({"verdict": "pass"}, {}) is False
    assert wc.append_step_summary("# hi", {}) is False


def test_step_summary_appends(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n", encoding="utf-8")
    assert wc.append_step_summary("## gate\nrow", {"GITHUB_STEP_SUMMARY": str(target)})
    assert target.read_text(encoding="utf-8") == "earlier step\n## gate\nrow\n"


def test_step_summary_is_kept_under_one_mebibyte_with_a_note(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("x" * 1000 + "\n", encoding="utf-8")
    rows = "".join(f"| case {i} | ünïcødé ✓ |\n" for i in range(60_000))
    assert len(rows.encode()) > wc.STEP_SUMMARY_LIMIT
    wc.append_step_summary(rows, {"GITHUB_STEP_SUMMARY": str(target)})
    data = target.read_bytes()
    assert len(data) <= wc.STEP_SUMMARY_LIMIT
    text = data.decode("utf-8")  # cut on a character boundary
    assert text.endswith(wc.TRUNCATION_NOTE)
    assert text[: -len(wc.TRUNCATION_NOTE)].endswith("|")  # whole rows only


def test_fit_summary_leaves_small_text_alone() -> None:
    assert wc.fit_summary("short", already=10) == "short"
    assert wc.fit_summary("x" * 100, already=wc.STEP_SUMMARY_LIMIT - 5) == ""
