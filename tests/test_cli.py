"""The command line's own promises: heavy imports stay out of --help and validate; errors are one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys; from stabilitygate.cli import main; code = main({args!r}); "
    "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'scipy') if m in sys.modules)); "
    "sys.exit(code)"
)


@pytest.mark.parametrize("args", [["--help"], ["validate", str(ROOT / "examples" / "suite.yml")]])
def test_help_and_validate_never_import_torch(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_version_and_unknown_flag() -> None:
    version = subprocess.run([sys.executable, "-m", "stabilitygate", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "0.1.0" in version.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "stabilitygate", "run", "x.yml", "--bogus"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--bogus" in bad.stderr


def test_domain_errors_are_one_line_and_keep_their_cause_for_debugging(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text("version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p}]\n")
    baseline = tmp_path / "suite.baseline.json"
    baseline.write_text('{"schema_version": 1, "suite": "x", "cases": {')  # truncated
    argv = [sys.executable, "-m", "stabilitygate", "run", str(suite)]
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"}, cwd=ROOT)
    assert plain.returncode == 2
    assert plain.stderr.strip().splitlines() == [
        f"stabilitygate: error: {baseline}:1: the baseline is not valid JSON (Expecting property name enclosed in "
        "double quotes, column 47); it may be truncated: restore it from git or re-record it with --update-baseline"
    ]
    debug = subprocess.run(
        argv, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "STABILITYGATE_DEBUG": "1"},
        cwd=ROOT,
    )  # fmt: skip
    assert debug.returncode == 2 and debug.stderr.startswith(plain.stderr.strip())
    assert "json.decoder.JSONDecodeError" in debug.stderr  # the cause behind the one line
    assert "The above exception was the direct cause of the following exception" in debug.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "x.yml", "--bogus"], "No such option '--bogus'"),
        (["run", "x.yml", "--fail-on", "sometimes"], "'sometimes' is not one of 'regression', 'fail', 'warn', 'never'"),
        (["run", "x.yml", "--samples", "1"], "--samples"),
        (["score", "--suite", "x.yml"], "Missing argument 'SAMPLES...'"),
        (["bogus"], "No such command 'bogus'"),
    ],
)
def test_usage_errors_are_one_line_like_every_other_error(args: list[str], said: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stabilitygate", *args], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("stabilitygate: error: ") and said in lines[0]
    assert "--help" in lines[0]  # where to look next


def stabilitygate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "stabilitygate", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


@pytest.mark.parametrize("where", ["provider", "case", "judge"])
def test_a_key_pasted_as_api_key_env_is_never_echoed(tmp_path: Path, where: str) -> None:
    key = "sk-fake-123456789abcdef"
    block = f"{{type: openai, model: m, api_key_env: {key}}}"
    provider = block if where == "provider" else "{type: openai, model: m}"
    case = f"{{id: a, prompt: p, provider: {block}}}" if where == "case" else "{id: a, prompt: p}"
    judge = f"equivalence: {{judge: {block}}}\n" if where == "judge" else ""
    suite = tmp_path / "suite.yml"
    suite.write_text(f"version: 1\nname: x\nprovider: {provider}\n{judge}cases:\n  - {case}\n")
    for command in ("validate", "run"):
        proc = stabilitygate(command, str(suite))
        assert proc.returncode == 2
        assert key not in proc.stdout + proc.stderr and "sk-fake" not in proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "api_key_env is the NAME of the environment variable that holds the key" in line, line
        assert "e.g. api_key_env: OPENAI_API_KEY" in line and "not the key itself" in line


def test_validate_warns_when_a_key_variable_is_unset(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text(
        "version: 1\nname: x\nprovider: {type: openai, model: m, api_key_env: MY_KEY}\n"
        "equivalence: {judge: {type: openai, model: j, api_key_env: JUDGE_KEY}}\ncases: [{id: a, prompt: p}]\n"
    )
    unset = stabilitygate("validate", str(suite))
    assert unset.returncode == 0 and unset.stdout.startswith(f"{suite}: valid (1 case, ")
    assert unset.stderr.strip().splitlines() == [
        f"stabilitygate: warning: {suite}:3: case 'a': the variable MY_KEY named by api_key_env is not set: "
        "`run` stops with exit 2 until it is",
        f"stabilitygate: warning: {suite}:4: case 'a': the variable JUDGE_KEY holding the entailment judge's API "
        "key is not set: `run` stops with exit 2 until it is",
    ]
    both = stabilitygate("validate", str(suite), env={"MY_KEY": "k" * 20, "JUDGE_KEY": "j" * 20})
    assert both.returncode == 0 and both.stderr == ""


def test_an_expected_answer_that_is_no_choice_label_is_exit_2_at_its_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    good = "  - {id: ok, prompt: p, answer: {choice: [A, B, C, D]}, expected: (b)}\n"
    bad = "  - id: letter\n    prompt: p\n    answer: {choice: [A, B, C, D]}\n    expected: E\n"
    suite.write_text("version: 1\nname: x\nprovider: {type: openai, model: m}\ncases:\n" + good + bad)
    proc = stabilitygate("validate", str(suite))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"stabilitygate: error: {suite}:9: cases[1].expected: expected one of the choice labels A, B, C, D, got 'E'"
    )


def test_a_json_pointer_without_its_slash_says_how_to_write_it(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text(
        "version: 1\nname: x\nprovider: {type: openai, model: m}\ncases: [{id: a, prompt: p, answer: {json: label}}]\n"
    )
    proc = stabilitygate("validate", str(suite))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"stabilitygate: error: {suite}:4: cases[0].answer: json: 'label' is not an RFC 6901 pointer, which starts "
        "with '/' ('' is the whole document): write json: /label"
    )
