"""`pip install llm-stability-gate` in a fresh venv, as a new user does it, and its first semantic runs.

Builds the wheel (scripts/build_wheel.py: the package with all-MiniLM-L6-v2's weights and graph inside),
makes a fresh venv (`python3 -m venv`, with its own pip and setuptools) and pip-installs the wheel
into it with its pinned dependencies from the configured index (timed; the venv's size before and
after, and the largest distributions); checks that torch, transformers and sentence-transformers
cannot be imported there; then runs a small suite with the default semantic layer (3 cases x 8
samples, concurrency 4) against the scripted OpenAI server (own process, 50 ms latency) with the
venv's `stabilitygate`: the first run (empty caches: nothing but what pip installed), a second run
(the embedding cache warm, as a user's next run) and a run with the embedding cache off (the model
loaded again). Each run is a fresh process, timed from its start to its exit.

Targets: pip install + first semantic run <= 120 s; venv <= 300 MB; no torch.

    .venv/bin/python bench/bench_install.py [--python python3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from scripted_server import scripted_server  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
TOTAL_TARGET_S = 120.0
VENV_TARGET_MB = 300.0
TOPICS = ("Feynman", "Curie", "Turing")
HEAVY = ("torch", "transformers", "sentence_transformers", "onnx")


def megabytes(path: Path) -> float:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            file = Path(dirpath) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total / 1e6


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def largest_distributions(python: Path, count: int = 6) -> list[tuple[str, float]]:
    code = (
        "import importlib.metadata as m, json, os\n"
        "rows = {}\n"
        "for d in m.distributions():\n"
        "    rows[d.metadata['Name']] = sum(os.path.getsize(d.locate_file(f)) for f in d.files or []"
        " if os.path.isfile(d.locate_file(f))) / 1e6\n"
        "print(json.dumps(rows))\n"
    )
    rows = json.loads(subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout)
    return sorted(rows.items(), key=lambda kv: -kv[1])[:count]


def importable(python: Path, module: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0


def write_suite(work: Path, base_url: str) -> Path:
    cases = [{"id": topic.lower(), "prompt": f"Where was {topic} born?"} for topic in TOPICS]
    suite = {
        "version": 1,
        "name": "bench-install",
        "provider": {"type": "openai", "model": "bench", "base_url": base_url, "params": {"temperature": 1}},
        "sampling": {"samples": 8, "concurrency": 4, "timeout_s": 30},
        "embedding": {"enabled": True},
        "cases": cases,
    }
    path = work / "suite.yml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def write_script(work: Path) -> Path:
    completions = {
        f"Where was {topic} born?": [[f"{topic} was born in city {i}, it is said.", 1] for i in range(4)]
        for topic in TOPICS
    }
    path = work / "script.json"
    path.write_text(json.dumps({"latency_s": 0.05, "completions": completions, "default": "unscripted"}))
    return path


def gate_runs(venv: Path, work: Path) -> dict[str, float]:
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench", "XDG_CACHE_HOME": str(work / "xdg")}
    env.pop("STABILITYGATE_MODEL_DIR", None)
    gate = [str(venv / "bin" / "stabilitygate"), "run", "--no-progress", "--fail-on", "never"]
    times = {}
    with scripted_server(write_script(work)) as base_url:
        suite = write_suite(work, base_url)
        for name, cache in (("first run", "cache"), ("second run", "cache"), ("embedding cache off", "off")):
            run_env = {**env, "STABILITYGATE_CACHE_DIR": str(work / cache) if cache != "off" else "off"}
            report = work / f"{name.replace(' ', '-')}.json"
            command = [*gate, str(suite), "--report-json", str(report), "--baseline", str(work / "none.json")]
            started = time.perf_counter()
            done = subprocess.run(command, cwd=work, env=run_env, capture_output=True, text=True)
            times[name] = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(f"{name} failed ({done.returncode}): {done.stderr}")
            embedding = json.loads(report.read_text())["run"]["embedding"]
            assert embedding["model"] == "all-MiniLM-L6-v2" and embedding["texts_embedded"] == 12, embedding
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--python", default="python3", help="the interpreter that makes the venv")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary directory)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-install-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        build_s = timed([sys.executable, str(ROOT / "scripts" / "build_wheel.py"), "--out", str(work / "dist")])
        (wheel,) = (work / "dist").glob("llm_stability_gate-*.whl")
        venv = work / "venv"
        subprocess.run([args.python, "-m", "venv", str(venv)], check=True)
        bare_mb = megabytes(venv)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q", "install"]
        install_s = timed([*pip, str(wheel)])
        venv_mb = megabytes(venv)
        python = venv / "bin" / "python"
        heavy = [m for m in HEAVY if importable(python, m)]
        runs = gate_runs(venv, work)
        print(f"wheel: {wheel.name}, {wheel.stat().st_size / 1e6:.1f} MB, built in {build_s:.1f} s")
        print(f"pip install: {install_s:.1f} s")
        print(
            f"venv: {venv_mb:.0f} MB (target <= {VENV_TARGET_MB:.0f}); the bare venv (pip, setuptools) "
            f"{bare_mb:.0f} MB, the install added {venv_mb - bare_mb:.0f} MB"
        )
        print("largest: " + ", ".join(f"{name} {mb:.0f} MB" for name, mb in largest_distributions(python)))
        print(f"importable there of {', '.join(HEAVY)}: {heavy or 'none'}")
        for name, seconds in runs.items():
            print(f"{name}: {seconds:.1f} s")
        total = install_s + runs["first run"]
        print(f"pip install + first semantic run: {total:.1f} s (target <= {TOTAL_TARGET_S:.0f})")
        ok = total <= TOTAL_TARGET_S and venv_mb <= VENV_TARGET_MB and "torch" not in heavy
        print("targets met" if ok else "TARGETS MISSED")
        return 0 if ok else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
