"""Secrets: with an API key set, nothing the gate writes or prints contains it."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest

from stabilitygate.cli import main
from tests.pipeline.conftest import write_suite
from tests.reliability.conftest import ROOT, Row
from tests.support.app_server import AnswerApp, key_spellings, more_key_spellings
from tests.support.openai_server import Fault, ScriptedOpenAI

KEY = "sk-test-SECRET-0123456789abcdef"


def forms(secret: str) -> list[str]:
    return [secret, quote(secret, safe=""), base64.b64encode(f"Bearer {secret}".encode()).decode()]


def run_everything(
    tmp_path: Path,
    base_url: str,
    capsys: pytest.CaptureFixture[str],
    *extra: str,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    provider = {
        "type": "openai",
        "model": "m",
        "base_url": base_url,
        "api_key_env": "GATE_KEY",
        "params": {"temperature": 0},
        **({"headers": headers} if headers else {}),
    }
    suite = write_suite(
        tmp_path,
        base_url,
        [{"id": "q", "prompt": "q", "answer": {"choice": ["A", "B"]}}],
        provider=provider,
        sampling={"samples": 4, "retries": 1, "max_retry_wait_s": 0.01, "timeout_s": 2},
    )
    outputs = {name: tmp_path / name for name in ("r.json", "r.md", "j.xml", "s.jsonl")}
    code = main(
        [
            "run",
            str(suite),
            "--no-progress",
            "--report-json",
            str(outputs["r.json"]),
            "--markdown",
            str(outputs["r.md"]),
            "--junit",
            str(outputs["j.xml"]),
            "--samples-out",
            str(outputs["s.jsonl"]),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".yml")
    return code, captured.out + captured.err + written


def assert_clean(everything: str) -> None:
    for form in forms(KEY):
        assert form not in everything


@pytest.mark.parametrize("status", [401, 500], ids=["fatal-401", "retried-500"])
def test_key_echoed_in_error_body_never_escapes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    record: Callable[[Row], None],
) -> None:
    monkeypatch.setenv("GATE_KEY", KEY)
    with ScriptedOpenAI({}, default="A", faults=[Fault("echo_auth", status=status)]) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys)
        hits = server.count
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    assert code == 3
    assert "***" in everything  # the echoed key was there, and redacted
    assert_clean(everything)
    record(
        Row(
            "provider echoing the API key in an error body",
            hits,
            1,
            1,
            0,
            "key redacted as *** in every message, report and file",
        )
    )


def test_key_inside_an_httpx_exception_never_escapes(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    record: Callable[[Row], None],
) -> None:
    # A header value httpx refuses: its exception message quotes the header, key included.
    monkeypatch.setenv("GATE_KEY", KEY)
    monkeypatch.setenv("GATE_HEADER", KEY + "\r\nInjected: 1")
    with ScriptedOpenAI({}, default="A") as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys, headers={"X-Extra": "${GATE_HEADER}"})
    assert code in (2, 3)
    assert_clean(everything)
    record(Row("API key inside an httpx exception", 1, 1, 1, 0, "exception text redacted before it is recorded"))


def test_key_never_in_a_successful_runs_files_or_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GATE_KEY", KEY)
    with ScriptedOpenAI({}, default="A", api_key=KEY) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys, "--update-baseline")
    assert code == 0
    assert (tmp_path / "suite.baseline.json").exists()
    assert_clean(everything)


# A key in which every spelling differs from the others: `/`, `"`, a space and `+` are escaped by
# URL encoding, `"` by JSON, and base64 (alone or in Basic credentials) hides all of it.
ECHO_KEY = 'sk-echo/"LEAKED" key+0123456789abcdef'
ECHO_SCRIPT = (
    "import os; from tests.support.app_server import key_spellings as k; print(' | '.join(k(os.environ['ECHO_KEY'])))"
)


def echo_suite(directory: Path, app: AnswerApp) -> Path:
    """Two cases whose providers put their key into every completion: a `command` and an `http` one."""
    command = {"type": "command", "command": [sys.executable, "-c", ECHO_SCRIPT], "api_key_env": "ECHO_KEY"}
    http = {
        "type": "http",
        "url": app.url("/v1/echo-key"),
        "api_key_env": "ECHO_KEY",
        "headers": {"Authorization": "Bearer ${api_key}"},
        "completion_pointer": "/data/answer",
    }
    cases = [{"id": "by-command", "prompt": "q", "provider": command}, {"id": "by-http", "prompt": "q"}]
    return write_suite(directory, app.base_url, cases, provider=http, sampling={"samples": 2, "concurrency": 2})


def assert_no_spelling(path: Path) -> None:
    text = path.read_text()
    for spelling in key_spellings(ECHO_KEY):
        assert spelling not in text, f"{path.name} holds the key as {spelling!r}"


def test_keys_echoed_in_completions_are_redacted_in_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ECHO_KEY", ECHO_KEY)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the command imports key_spellings from tests.support
    outputs = {flag: tmp_path / name for flag, name in OUTPUT_FLAGS.items()}
    with AnswerApp(token=ECHO_KEY) as app:
        suite = echo_suite(tmp_path, app)
        code = main(["run", str(suite), "--no-progress", "--update-baseline", *flags_for(outputs)])
        assert app.requests and all(r.headers["authorization"] == f"Bearer {ECHO_KEY}" for r in app.requests)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    samples = [json.loads(line) for line in outputs["--samples-out"].read_text().splitlines()]
    assert {s["case"] for s in samples} == {"by-command", "by-http"}
    assert all(s["text"].count("***") == len(key_spellings(ECHO_KEY)) for s in samples)  # each spelling, replaced
    for path in [*outputs.values(), tmp_path / "suite.baseline.json"]:
        assert_no_spelling(path)
    for spelling in key_spellings(ECHO_KEY):
        assert spelling not in captured.out + captured.err


def test_keys_echoed_in_completions_stay_out_of_the_actions_files_and_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stabilitygate.github import action

    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.chdir(tmp_path)  # the Action moves into its working directory; this undoes it
    summary = tmp_path / "summary.md"
    with AnswerApp(token=ECHO_KEY) as app:
        echo_suite(tmp_path, app)
        environ = {
            **os.environ,
            "ECHO_KEY": ECHO_KEY,
            "GITHUB_WORKSPACE": str(tmp_path),
            "GITHUB_STEP_SUMMARY": str(summary),
            "INPUT_SUITE": "suite.yml",
            "INPUT_COMMENT": "false",
        }
        code = action.main(environ)
    log = capsys.readouterr().out
    assert code == 0, log
    written = [p for p in (tmp_path / ".stabilitygate").glob("*") if p.is_file()]
    assert {p.name for p in written} >= {"report.json", "report.md", "junit.xml", "samples.jsonl"}
    assert "***" in summary.read_text()
    for path in [*written, summary]:
        assert_no_spelling(path)
    unmasked = [line for line in log.splitlines() if not line.startswith("::add-mask::")]
    for spelling in key_spellings(ECHO_KEY):
        assert all(spelling not in line for line in unmasked)


OUTPUT_FLAGS = {"--samples-out": "s.jsonl", "--report-json": "r.json", "--markdown": "r.md", "--junit": "j.xml"}


def flags_for(outputs: dict[str, Path]) -> list[str]:
    return [part for flag, path in outputs.items() for part in (flag, str(path))]


def partial_keys(secret: str, everything: str, shortest: int = 8) -> list[str]:
    """The prefixes of `secret` at least `shortest` long found in the text: what a cut left behind."""
    return [secret[:n] for n in range(len(secret), shortest - 1, -1) if secret[:n] in everything][:1]


@pytest.mark.parametrize(
    ("variable", "status"),
    [("GATE_KEY", 500), ("GATE_KEY", 200), ("GITHUB_TOKEN", 500)],
    ids=["named-key-in-an-error-body", "named-key-in-a-200-error-reply", "unnamed-token-in-an-error-body"],
)
def test_a_key_straddling_the_preview_cut_is_redacted_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, status: int
) -> None:
    """Error bodies are shown cut to 300 characters: redacted first, then cut (issue 25, item 5)."""
    secret = KEY if variable == "GATE_KEY" else "ghs_jobTokenStraddlingTheCut0123456789"
    monkeypatch.setenv("GATE_KEY", KEY)
    monkeypatch.setenv(variable, secret)
    # Cut at 300 characters: the message of a 200 reply, or the one-line preview of a 500's body.
    pad = 280 if status == 200 else 300 - len('{"error": {"message": "') - 22
    message = "x" * pad + secret + " and then the rest of the error"
    body = json.dumps({"error": {"message": message, "type": "server_error"}})
    start = pad if status == 200 else body.index(secret)
    assert start + 12 <= 300 < start + len(secret)  # a cut would keep 12 or more of its characters
    with ScriptedOpenAI({}, default="A", faults=[Fault("status", status=status, body=body)]) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys)
    assert code == 3, everything
    assert "x" * 200 in everything  # the error body was shown, cut
    assert partial_keys(secret, everything) == []


CREDENTIALS = {
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "SSH_PRIVATE_KEY": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n-----END-----",
    "NPM_AUTH": "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "GITHUB_PAT": "github_pat_11AAAAAAA0123456789abcdef",
}
DATABASE_URL = "postgres://app:db-Passw0rd-never-shown@db.internal:5432/app"
SPELLING_SCRIPT = (
    "import os\n"
    "from tests.support.app_server import more_key_spellings\n"
    "names = " + repr(sorted(CREDENTIALS)) + "\n"
    "parts = list(more_key_spellings(os.environ['ECHO_KEY']).values()) + [os.environ[n] for n in names]\n"
    "parts.append('db-Passw0rd-never-shown')\n"
    "print(' | '.join(parts))\n"
)


def test_every_spelling_and_every_credential_of_the_environment_is_redacted_in_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 11: the spellings and the credential names the first round of hardening let through."""
    monkeypatch.setenv("ECHO_KEY", ECHO_KEY)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the command imports the spellings from tests
    monkeypatch.setenv("DATABASE_URL", DATABASE_URL)
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    command = {"type": "command", "command": [sys.executable, "-c", SPELLING_SCRIPT], "api_key_env": "ECHO_KEY"}
    suite = write_suite(tmp_path, "http://127.0.0.1:9/v1", [{"id": "spell", "prompt": "q"}], provider=command,
                        sampling={"samples": 2, "concurrency": 2})  # fmt: skip
    outputs = {flag: tmp_path / name for flag, name in OUTPUT_FLAGS.items()}
    code = main(["run", str(suite), "--no-progress", "--update-baseline", *flags_for(outputs)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    samples = [json.loads(line) for line in outputs["--samples-out"].read_text().splitlines()]
    expected = len(more_key_spellings(ECHO_KEY)) + len(CREDENTIALS) + 1
    assert samples and {s["text"].count("***") for s in samples} == {expected}
    assert {part.strip() for part in samples[0]["text"].split("|")} == {"***"}
    leaked = [*more_key_spellings(ECHO_KEY).values(), *CREDENTIALS.values(), "db-Passw0rd-never-shown"]
    for path in [*outputs.values(), tmp_path / "suite.baseline.json"]:
        text = path.read_text()
        assert [value for value in leaked if value in text] == [], path.name
    assert [value for value in leaked if value in captured.out + captured.err] == []


def test_a_key_too_short_to_redact_is_left_alone_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Item 12: a one-letter key must not rewrite every `k` of the completions and of the usage keys."""
    monkeypatch.setenv("GATE_KEY", "k")
    with ScriptedOpenAI({}, default="the kind keeper knocked", api_key="k", fingerprint="fp_fake") as server:
        suite = write_suite(
            tmp_path,
            server.base_url,
            [{"id": "q", "prompt": "q"}],
            provider={"type": "openai", "model": "m", "base_url": server.base_url, "api_key_env": "GATE_KEY"},
            sampling={"samples": 2},
        )
        samples = tmp_path / "s.jsonl"
        code = main(["run", str(suite), "--no-progress", "--samples-out", str(samples)])
    err = capsys.readouterr().err
    assert code == 0, err
    [warning] = [line for line in err.splitlines() if "GATE_KEY" in line and "keys sent to" not in line]
    assert "too short to redact" in warning and "not redacted" in warning
    first = json.loads(samples.read_text().splitlines()[0])
    assert first["text"] == "the kind keeper knocked" and first["fingerprint"] == "fp_fake"
    assert set(first["usage"]) >= {"prompt_tokens", "completion_tokens"}


# --- issue 37, item 3: redaction follows the secret -------------------------------------------------


@pytest.mark.parametrize("status", [500, 200], ids=["error-body", "error-reply-message"])
def test_a_key_echoed_across_a_line_break_of_an_error_body_is_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], status: int
) -> None:
    """The body used to be folded onto one line first: the key's halves, a space apart, matched nothing."""
    monkeypatch.setenv("GATE_KEY", KEY)
    split = KEY[:12] + "\r\n" + KEY[12:]
    body = json.dumps({"error": {"message": f"refused:\n{split}\nis not a key"}})
    if status == 500:
        body = f"<html>\nrefused:\n{split}\nis not a key\n</html>"
    with ScriptedOpenAI({}, default="A", faults=[Fault("status", status=status, body=body)]) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys)
    assert code == 3, everything
    assert "refused: *** is not a key" in everything
    assert partial_keys(KEY, everything) == [] and KEY[12:] not in everything


VARIANT_KEY = "model-access-0123456789abcdef"  # in a variable no name rule calls secret
ECHO_OTHER = (
    "import os, sys\n"
    "key = os.environ['MODEL_ACCESS']\n"
    "if os.environ['STABILITYGATE_SAMPLE_INDEX'] == '0':\n"
    "    sys.stderr.write('failed with ' + key[:10] + '\\n' + key[10:] + ' refused\\n'); sys.exit(1)\n"
    "print('echo ' + key)\n"
)


def test_a_variant_is_redacted_with_every_key_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variant's `command` that echoes the case's key (its stdout, and its stderr split over two lines):
    each variant used to be redacted with its own providers' keys only."""
    monkeypatch.setenv("MODEL_ACCESS", VARIANT_KEY)
    echo = {"type": "command", "command": [sys.executable, "-c", ECHO_OTHER]}
    with ScriptedOpenAI({}, default="A", api_key=VARIANT_KEY) as server:
        provider = {"type": "openai", "model": "m", "base_url": server.base_url, "api_key_env": "MODEL_ACCESS"}
        cases = [{"id": "q", "prompt": "q", "variants": {"echo": {"provider": echo}}}]
        suite = write_suite(tmp_path, server.base_url, cases, provider=provider,
                            sampling={"samples": 3, "retries": 0, "concurrency": 1})  # fmt: skip
        outputs = {flag: tmp_path / name for flag, name in OUTPUT_FLAGS.items()}
        code = main(["run", str(suite), "--no-progress", "--variants", *flags_for(outputs)])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    variants = (tmp_path / "s.variants.jsonl").read_text()
    assert "echo ***" in variants and "failed with *** refused" in variants
    everything = captured.out + captured.err + "".join(p.read_text() for p in tmp_path.iterdir() if p.is_file())
    assert partial_keys(VARIANT_KEY, everything) == [] and VARIANT_KEY[10:] not in everything


def test_credentials_of_a_url_in_a_completion_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GATE_KEY", KEY)
    said = "push to https://deploy:Pw-unknown-to-the-gate@git.example/r.git"
    with ScriptedOpenAI({}, default=said) as server:
        code, everything = run_everything(tmp_path, server.base_url, capsys)
    assert code in (0, 1)
    assert "https://***@git.example/r.git" in everything and "Pw-unknown-to-the-gate" not in everything
