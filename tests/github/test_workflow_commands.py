from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stabilitygate.github import workflow_commands as wc


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


def read_outputs(path: Path) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT as the runner does: `name<<DELIM` blocks."""
    found: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        found[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return found


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
