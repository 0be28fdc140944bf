"""A whole `stabilitygate run` with the semantic layer off, on with an empty cache and on with a warm one,
side by side with the floor: a bare asyncio httpx client doing the same requests.

The promptfoo-shaped suite: 6 cases x 20 samples, concurrency 8, against the scripted OpenAI server
on loopback (in its own process) with 200 ms latency; by default each case's completions are 10
distinct sentences (60 distinct texts in the run; `--distinct 20` makes every sample different), so
the semantic layer has real embedding work. Every
measured command is a fresh process, timed from its start to its exit (the interpreter's start
included), and its peak RSS is read from os.wait4. Rounds interleave the four commands; the median
of the rounds is reported. promptfoo joins the table where it is installed.

Targets (ratios to the floor): semantic off <= 1.15; semantic on, empty cache <= 1.35; peak RSS of
the cold semantic run <= 350 MB.

    .venv/bin/python bench/bench_semantic_run.py [--rounds 3] [--distinct 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from scripted_server import scripted_server  # bench/, beside this script

ROOT = Path(__file__).resolve().parents[1]
LATENCY_S = 0.2
CASES = 6
SAMPLES = 20
CONCURRENCY = 8
DISTINCT_PER_CASE = 10  # --distinct N changes it (20: every sample different)
TOPICS = ("Feynman", "Curie", "Turing", "Lovelace", "Noether", "Ramanujan")
TARGETS = {"semantic off": 1.15, "semantic on, empty cache": 1.35}
RSS_TARGET_MB = 350.0
GATE = [sys.executable, "-m", "stabilitygate"]

CLIENT = """
import asyncio, sys, httpx
base, prompts, samples, concurrency = sys.argv[1], sys.argv[2:-2], int(sys.argv[-2]), int(sys.argv[-1])
async def main():
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=30) as client:
        async def one(prompt):
            async with gate:
                body = {"model": "bench", "messages": [{"role": "user", "content": prompt}], "temperature": 1}
                reply = await client.post(base + "/chat/completions", json=body)
                reply.raise_for_status()
                return reply.json()["choices"][0]["message"]["content"]
        texts = await asyncio.gather(*(one(p) for p in prompts for _ in range(samples)))
    assert len(texts) == len(prompts) * samples
asyncio.run(main())
"""


@dataclass(frozen=True)
class Measured:
    wall_s: float
    rss_mb: float
    exit_code: int


def prompts() -> list[str]:
    return [f"In one sentence: who was {topic} and what is {topic} known for?" for topic in TOPICS[:CASES]]


def completions(topic: str, distinct: int) -> list[tuple[str, int]]:
    """`distinct` different, similar answers, served in a cycle."""
    openings = ("", "In short, ", "Briefly: ", "Well, ", "To answer: ")
    endings = (" That is the usual summary.", " Historians agree on this.", "", " So the books say.")
    texts = [
        f"{opening}{topic} was a scientist known for foundational work in the field.{ending}"
        for opening in openings
        for ending in endings
    ]
    return [(text, 1) for text in texts[:distinct]]


def write_files(directory: Path, base_url: str) -> dict[str, Path]:
    cases = [{"id": f"case{i}", "prompt": p} for i, p in enumerate(prompts())]
    provider = {"type": "openai", "model": "bench", "base_url": base_url, "params": {"temperature": 1}}
    sampling = {"samples": SAMPLES, "concurrency": CONCURRENCY, "timeout_s": 30}
    suites = {}
    for name, enabled in (("off", False), ("on", True)):
        suite = {
            "version": 1,
            "name": f"bench-{name}",
            "provider": provider,
            "sampling": sampling,
            "embedding": {"enabled": enabled},
            "cases": cases,
        }
        path = directory / f"suite-{name}.yml"
        path.write_text(yaml.safe_dump(suite, sort_keys=False))
        suites[name] = path
    return suites


def server_script(directory: Path, distinct: int) -> Path:
    script = {
        "latency_s": LATENCY_S,
        "completions": {p: completions(t, distinct) for p, t in zip(prompts(), TOPICS, strict=False)},
        "default": "unscripted",
    }
    path = directory / "script.json"
    path.write_text(json.dumps(script))
    return path


def measure(command: Sequence[str], env: dict[str, str]) -> Measured:
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1) and process.stderr is not None:
        sys.stderr.write(process.stderr.read().decode(errors="replace"))
    return Measured(wall, usage.ru_maxrss / 1024, process.returncode)


def gate_command(suite: Path, report: Path) -> list[str]:
    return [
        *GATE, "run", str(suite), "--baseline", str(report.with_suffix(".baseline")),
        "--report-json", str(report), "--no-progress", "--fail-on", "never",
    ]  # fmt: skip


def promptfoo_command(directory: Path, base_url: str) -> list[str] | None:
    """promptfoo's own eval of the same 120 requests, where promptfoo is installed."""
    binary = shutil.which("promptfoo")
    if binary is None:
        return None
    config = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "openai:chat:bench", "config": {"apiBaseUrl": base_url, "apiKey": "unused"}}],
        "tests": [{"vars": {"question": p}} for p in prompts()],
    }
    path = directory / "promptfooconfig.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return [
        binary, "eval", "-c", str(path), "--repeat", str(SAMPLES), "--max-concurrency", str(CONCURRENCY),
        "--no-cache", "--no-progress-bar", "--no-write",
    ]  # fmt: skip


def same_report_cold_and_warm(work: Path, suite: Path, samples: Path, warm_cache: Path, env: dict[str, str]) -> bool:
    """Whether scoring the same samples with an empty and with a warm cache writes byte-identical reports.

    (Two runs' reports may differ anyway: which completion a sample index gets depends on the order
    in which concurrent requests reach the server.)
    """
    reports = []
    for name, cache in (("cold", work / "scoring-cache"), ("warm", warm_cache)):
        report = work / f"scored-{name}.json"
        command = [*GATE, "score", str(samples), "--suite", str(suite), "--baseline", str(work / "none.json")]
        subprocess.run(
            [*command, "--report-json", str(report), "--fail-on", "never"],
            cwd=ROOT,
            env={**env, "STABILITYGATE_CACHE_DIR": str(cache)},
            stdout=subprocess.DEVNULL,
            check=True,
        )
        reports.append(report.read_bytes())
    return reports[0] == reports[1]


def run_round(
    work: Path, base_url: str, suites: dict[str, Path], warm_cache: Path, env: dict[str, str], number: int
) -> dict[str, Measured]:
    results: dict[str, Measured] = {}
    floor = [sys.executable, "-c", CLIENT, base_url, *prompts(), str(SAMPLES), str(CONCURRENCY)]
    results["floor: bare asyncio httpx client"] = measure(floor, env)
    off_env = {**env, "STABILITYGATE_CACHE_DIR": "off"}
    results["semantic off"] = measure(gate_command(suites["off"], work / f"off-{number}.json"), off_env)
    cold_env = {**env, "STABILITYGATE_CACHE_DIR": str(work / f"cold-cache-{number}")}
    results["semantic on, empty cache"] = measure(gate_command(suites["on"], work / f"cold-{number}.json"), cold_env)
    warm_env = {**env, "STABILITYGATE_CACHE_DIR": str(warm_cache)}
    results["semantic on, warm cache"] = measure(gate_command(suites["on"], work / f"warm-{number}.json"), warm_env)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--distinct", type=int, default=DISTINCT_PER_CASE, help="distinct completions per case")
    args = parser.parse_args(argv)
    distinct = max(1, min(args.distinct, SAMPLES))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-bench", "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with scripted_server(server_script(work, distinct)) as base_url:
            suites = write_files(work, base_url)
            warm_cache = work / "warm-cache"
            samples = work / "samples.jsonl"
            warming = [*gate_command(suites["on"], work / "warming.json"), "--samples-out", str(samples)]
            warmed = measure(warming, {**env, "STABILITYGATE_CACHE_DIR": str(warm_cache)})
            rounds = [run_round(work, base_url, suites, warm_cache, env, n) for n in range(args.rounds)]
            pf_command = promptfoo_command(work, base_url)
            promptfoo = measure(pf_command, env) if pf_command is not None else None
            same_report = same_report_cold_and_warm(work, suites["on"], samples, warm_cache, env)
    print_table(rounds, promptfoo, warmed, same_report, distinct)
    return 0


def print_table(
    rounds: list[dict[str, Measured]], promptfoo: Measured | None, warmed: Measured, same_report: bool, distinct: int
) -> None:
    labels = list(rounds[0])
    median = {label: statistics.median(r[label].wall_s for r in rounds) for label in labels}
    rss = {label: max(r[label].rss_mb for r in rounds) for label in labels}
    codes = {label: sorted({r[label].exit_code for r in rounds}) for label in labels}
    floor = median[labels[0]]
    print(
        f"{CASES} cases x {SAMPLES} samples, concurrency {CONCURRENCY}, {LATENCY_S * 1000:.0f} ms scripted server, "
        f"{CASES * distinct} distinct texts; median of {len(rounds)} rounds, each command a fresh process"
    )
    print("| run | wall (s) | ratio to floor | target | peak RSS (MB) | exit |")
    print("| --- | ---: | ---: | --- | ---: | --- |")
    for label in labels:
        ratio = median[label] / floor
        target = TARGETS.get(label)
        verdict = "" if target is None else f"<= {target} ({'met' if ratio <= target else 'MISSED'})"
        if label == "semantic on, empty cache":
            verdict += f"; RSS <= {RSS_TARGET_MB:.0f} MB ({'met' if rss[label] <= RSS_TARGET_MB else 'MISSED'})"
        print(f"| {label} | {median[label]:.2f} | {ratio:.2f} | {verdict} | {rss[label]:.0f} | {codes[label]} |")
    if promptfoo is None:
        print("| promptfoo eval | not installed here | | | | |")
    else:
        print(
            f"| promptfoo eval | {promptfoo.wall_s:.2f} | {promptfoo.wall_s / floor:.2f} | | "
            f"{promptfoo.rss_mb:.0f} | [{promptfoo.exit_code}] |"
        )
    print(f"warm-up run that filled the warm cache: {warmed.wall_s:.2f} s, exit {warmed.exit_code}")
    verdict = "byte-identical" if same_report else "DIFFERENT"
    print(f"the warm-up run's samples scored with an empty and with the warm cache: reports {verdict}")


if __name__ == "__main__":
    sys.exit(main())
