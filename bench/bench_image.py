"""The Action's image: its size, its compressed (pull) size, and container start to first request.

    .venv/bin/python bench/bench_image.py [--image TAG] [--local-image TAG] [--runs 3]

`--image` (default llm-stability-gate:smoke, what scripts/container_smoke_test.sh builds) is the
Action's image; `--local-image` adds the image with the embedded local model (`--target local`)
when it has been built. For each: the size `docker image inspect` reports, the compressed size
(`docker save` through gzip at level 6, as a registry's gzip layers are close to), whether torch
is inside. For the Action's image: the container run as the runner runs it (workspace mounted,
INPUT_* variables) against a scripted OpenAI-compatible server on loopback, timed from `docker run`
to the server's first request and to the container's exit (a suite of 2 cases x 4 samples, the
semantic layer on), median of --runs, the first (cold) run shown apart.

Target: <= 450 MB for the Action's image. Prints two tables; without a Docker engine or the images
it says so and exits 0 (the figures then cannot be measured here).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.openai_server import ScriptedOpenAI  # noqa: E402 (the repository root first)

TARGET_BYTES = 450 * 1000 * 1000  # docker's "MB" are 10^6 bytes
MB = 1e6
PROMPTS = {
    "What is 2 + 2? Reply with the number only.": [("4", 1)],
    "Name one primary colour.": [("Red", 1), ("Blue", 1)],
}
SUITE = """version: 1
name: bench-image
provider:
  type: openai
  model: scripted-model
  base_url: {base_url}
  api_key_env: BENCH_API_KEY
sampling: {{samples: 4, concurrency: 4, timeout_s: 20, retries: 0}}
cases:
  - id: steady
    prompt: "What is 2 + 2? Reply with the number only."
    answer: {{number: true}}
  - id: wobbly
    prompt: "Name one primary colour."
"""


class TimedOpenAI(ScriptedOpenAI):
    """The scripted server, noting when the first request arrived (time.monotonic)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._first_lock = threading.Lock()
        self.first_request_at: float | None = None

    def _arrive(self, path: str, headers: Mapping[str, str], body: Any) -> int:
        with self._first_lock:
            if self.first_request_at is None:
                self.first_request_at = time.monotonic()
        return super()._arrive(path, headers, body)


@dataclass(frozen=True)
class ImageFacts:
    tag: str
    size_bytes: int
    compressed_bytes: int
    has_torch: bool
    layers: int


@dataclass(frozen=True)
class RunTiming:
    to_first_request_s: float
    to_exit_s: float


def docker(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)


def engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return docker("info", timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def image_exists(tag: str) -> bool:
    return docker("image", "inspect", tag, timeout=30).returncode == 0


def compressed_size(tag: str) -> int:
    """Bytes of `docker save TAG` through gzip -6: about what a registry's gzip layers add up to."""
    counted = 0
    compressor = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # the gzip format
    with subprocess.Popen(["docker", "save", tag], stdout=subprocess.PIPE) as save:
        stream = save.stdout
        assert stream is not None
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            counted += len(compressor.compress(chunk))
        counted += len(compressor.flush())
    if save.returncode != 0:
        raise RuntimeError(f"docker save {tag} failed with exit code {save.returncode}")
    return counted


def image_facts(tag: str) -> ImageFacts:
    inspected = json.loads(docker("image", "inspect", tag, timeout=30).stdout)[0]
    probe = docker(
        "run", "--rm", "--network", "none", "--entrypoint", "/opt/venv/bin/python", tag,
        "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)",
        timeout=120,
    )  # fmt: skip
    return ImageFacts(
        tag=tag,
        size_bytes=int(inspected["Size"]),
        compressed_bytes=compressed_size(tag),
        has_torch=probe.returncode == 0,
        layers=len(inspected["RootFS"]["Layers"]),
    )


def runner_run(tag: str, workspace: Path, api_key: str) -> list[str]:
    """`docker run` as the runner starts a container action (the parts the gate reads)."""
    return [
        "docker", "run", "--rm", "--network", "host",
        "--workdir", "/github/workspace", "-v", f"{workspace}:/github/workspace",
        "-e", "GITHUB_WORKSPACE=/github/workspace", "-e", "GITHUB_ACTIONS=true", "-e", "CI=true",
        "-e", "GITHUB_EVENT_NAME=push", "-e", "INPUT_SUITE=.stability/suite.yml",
        "-e", "INPUT_COMMENT=false", "-e", "INPUT_UPDATE-BASELINE=true", "-e", "INPUT_FAIL-ON=never",
        "-e", f"BENCH_API_KEY={api_key}",
        tag,
    ]  # fmt: skip


def timed_run(tag: str) -> RunTiming:
    api_key = "sk-bench-image"
    with TimedOpenAI(PROMPTS, api_key=api_key) as server, tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        (workspace / ".stability").mkdir()
        (workspace / ".stability" / "suite.yml").write_text(SUITE.format(base_url=server.base_url), encoding="utf-8")
        started = time.monotonic()
        proc = subprocess.run(runner_run(tag, workspace, api_key), capture_output=True, text=True, timeout=600)
        ended = time.monotonic()
        report = workspace / ".stabilitygate" / "report.json"
        if proc.returncode != 0 or not report.is_file() or server.first_request_at is None:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
            raise RuntimeError(f"the container run failed (exit {proc.returncode}):\n{tail}")
        if json.loads(report.read_text(encoding="utf-8"))["run"]["embedding"]["texts_embedded"] < 1:
            raise RuntimeError("the run embedded nothing: the semantic layer did not run")
        return RunTiming(server.first_request_at - started, ended - started)


def verdict(size_bytes: int) -> str:
    return "met" if size_bytes <= TARGET_BYTES else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--image", default="llm-stability-gate:smoke", help="the Action's image")
    parser.add_argument("--local-image", default=None, help="the image built with --target local (optional)")
    parser.add_argument("--runs", type=int, default=3, help="container runs to time (median)")
    args = parser.parse_args(argv)
    if not engine_answers():
        print("no Docker engine answers here: image figures not measured (scripts/docker_engine.sh starts one)")
        return 0
    tags = [t for t in (args.image, args.local_image) if t]
    missing = [t for t in tags if not image_exists(t)]
    if missing:
        print(f"not built: {', '.join(missing)}: image figures not measured (scripts/container_smoke_test.sh builds")
        print("the Action's image; `docker build --target local` the other)")
        return 0
    print("| image | size (MB) | target | compressed, gzip -6 (MB) | layers | torch inside |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for tag in tags:
        facts = image_facts(tag)
        target = f"<= 450 ({verdict(facts.size_bytes)})" if tag == args.image else ""
        print(
            f"| {facts.tag} | {facts.size_bytes / MB:.0f} | {target} | {facts.compressed_bytes / MB:.0f} "
            f"| {facts.layers} | {'yes' if facts.has_torch else 'no'} |"
        )
    timings = [timed_run(args.image) for _ in range(max(1, args.runs))]
    warm = timings[1:] or timings
    print()
    print("| container run (runner-shaped, 2 cases x 4 samples) | first run (s) | median of the others (s) |")
    print("| --- | ---: | ---: |")
    first = timings[0]
    print(
        f"| docker run to the first request | {first.to_first_request_s:.2f} "
        f"| {statistics.median(t.to_first_request_s for t in warm):.2f} |"
    )
    print(f"| docker run to exit | {first.to_exit_s:.2f} | {statistics.median(t.to_exit_s for t in warm):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
