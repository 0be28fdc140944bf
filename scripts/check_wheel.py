#!/usr/bin/env python3
"""Check a built wheel as a user gets it: installed alone in a fresh venv, then a semantic suite run from it.

    python scripts/check_wheel.py dist/llm_stability_gate-X.Y.Z-py3-none-any.whl
    python scripts/check_wheel.py --stabilitygate .venv/bin/stabilitygate   # the run only, no install

The release workflow (.github/workflows/release.yml) runs it between building the wheel and publishing
it. It makes a venv (`python -m venv`), pip-installs the wheel with its pinned dependencies, checks that
torch and onnx are not importable there (the wheel needs neither), then runs a free-text suite with the
default semantic layer against the scripted OpenAI server of tests/support (its own process, on
loopback) with the venv's `stabilitygate`, in an empty directory and with empty caches, so that only
what pip installed can answer: exit 0, the model all-MiniLM-L6-v2 named in the report, texts embedded.
Whatever fails is one line on stderr and exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = "all-MiniLM-L6-v2"
#: Two free-text cases: one stable, one worded three ways, so that the semantic numbers are measured.
COMPLETIONS = {
    "Where was Richard Feynman born?": [["Feynman was born in Queens, New York.", 1]],
    "Why is the sky blue?": [
        ["Sunlight scatters off air molecules, and blue light scatters most.", 2],
        ["Blue light is scattered more by the air than red light.", 1],
    ],
}
SUITE = """\
version: 1
name: wheel-check
provider: {{type: openai, model: scripted, base_url: "{base_url}", params: {{temperature: 0}}}}
sampling: {{samples: 6, concurrency: 4, timeout_s: 30, retries: 2}}
cases:
  - id: feynman
    prompt: "Where was Richard Feynman born?"
  - id: sky
    prompt: "Why is the sky blue?"
"""


class CheckFailed(Exception):
    """What the check found wrong, in one line."""


def fresh_venv(wheel: Path, where: Path) -> Path:
    """A new venv with the wheel installed; its `stabilitygate`."""
    if not wheel.is_file():
        raise CheckFailed(f"{wheel}: no such wheel")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "-q"]
    if subprocess.run([*pip, "install", str(wheel)]).returncode != 0:
        raise CheckFailed(f"pip install {wheel.name} into a fresh venv failed (its output is above)")
    for heavy in ("torch", "onnx"):
        found = subprocess.run([str(python), "-c", f"import {heavy}"], capture_output=True).returncode == 0
        if found:
            raise CheckFailed(f"{heavy} is importable after installing the wheel alone: it must need neither")
    return venv / "bin" / "stabilitygate"


@contextlib.contextmanager
def scripted_server(script: Path) -> Iterator[str]:
    """tests/support/openai_server.py in its own process, from the checkout; yields its base URL."""
    command = [sys.executable, "-m", "tests.support.openai_server", "--port", "0", "--script", str(script)]
    server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=10)


def semantic_run(stabilitygate: Path, where: Path) -> dict[str, object]:
    """Run the suite with `stabilitygate` in an empty directory and empty caches; its report."""
    script = where / "script.json"
    script.write_text(json.dumps({"completions": COMPLETIONS, "default": "OK"}))
    work = where / "work"
    work.mkdir()
    report = work / "report.json"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(where / "home"),
        "XDG_CACHE_HOME": str(where / "cache"),
    }
    with scripted_server(script) as base_url:
        (work / "suite.yml").write_text(SUITE.format(base_url=base_url))
        command = [str(stabilitygate), "run", "suite.yml", "--no-progress", "--report-json", str(report)]
        proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise CheckFailed(f"the semantic run exited {proc.returncode}: {last[0]}")
    loaded: dict[str, object] = json.loads(report.read_text())
    return loaded


def check_report(report: dict[str, object]) -> str:
    """The report of a semantic run on the default model, with every case measured; a summary line."""
    run = report.get("run")
    embedding = run.get("embedding") if isinstance(run, dict) else None
    if not isinstance(embedding, dict) or embedding.get("model") != MODEL:
        raise CheckFailed(f"the report names no semantic layer on {MODEL}: {embedding!r}")
    embedded = embedding.get("texts_embedded")
    if not isinstance(embedded, int) or embedded < 2:
        raise CheckFailed(f"the model embedded {embedded!r} texts, not every distinct completion")
    cases = report.get("cases")
    measured = (
        [c for c in cases if isinstance(c, dict) and c["metrics"].get("cosine_min") is not None]
        if isinstance(cases, list)
        else []
    )
    if len(measured) != len(COMPLETIONS):
        raise CheckFailed(f"{len(measured)} of {len(COMPLETIONS)} cases have a min cosine")
    return f"check_wheel: ok: a semantic run on {MODEL} from the installed wheel, {embedded} texts embedded"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("wheel", nargs="?", type=Path, help="the wheel to install in a fresh venv")
    given.add_argument("--stabilitygate", type=Path, help="an installed stabilitygate to run instead (no install)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="stabilitygate-wheel-check-") as temp:
        where = Path(temp)
        try:
            command = args.stabilitygate.absolute() if args.stabilitygate else fresh_venv(args.wheel.absolute(), where)
            print(check_report(semantic_run(command, where)))
        except (CheckFailed, subprocess.CalledProcessError, OSError) as exc:
            print(f"check_wheel: error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
