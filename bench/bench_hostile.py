"""What the hostile inputs of issue 25 cost now, at the attacks' own sizes (the tests use small ones).

Prints, best of REPEATS, in seconds:
- refusing the 611-byte YAML alias bomb (9^9 nodes expanded; it ran past 60 s before);
- the JSON hunt (`answer: {json: ""}`) over an 8 MiB completion of open arrays (2,000 starts, each
  read to the end, before: about 40 s per MB);
- a regex that backtracks without end, stopped by its time limit;
- redacting an 8 MiB completion with ten secrets, the skeleton included;
- the logprob lattice check over 4,096 entries with runner-ups;
- the report of ten distinct 7 MiB completions, written by `stabilitygate score` (73 MB before).

Issue 37's attacks, each beside what it cost before (the bound lifted in the same run where it can be,
else the issue's figure):
- an answer schema's `pattern` that backtracks, on 41 characters (jsonschema's `re`: past 60 s);
- peak memory of a run of 24 distinct 7.5 MiB completions, with the held-text bound lifted and with
  it (scaled to 32 Mi characters, so that a bench run shows it without a gigabyte more);
- the report of 12 replies whose finish_reason is 1.3 M characters, the bound lifted and kept.

    .venv/bin/python bench/bench_hostile.py
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scripted_server import scripted_server  # bench/, beside this script

from stabilitygate.cases import resolve
from stabilitygate.errors import BadInput
from stabilitygate.measure.parsers import parse_answer
from stabilitygate.patterns import search
from stabilitygate.redaction import lattice_spells
from stabilitygate.secrets import Secrets
from stabilitygate.suite.load import parse_suite_file
from stabilitygate.suite.model import AnswerSpec

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 3
MIB = 1024 * 1024


def best(work: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def refused(work: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            work()
        except BadInput:
            return
        raise AssertionError("not refused")

    return run


def alias_bomb() -> str:
    lines = ["version: 1", "name: bomb", 'l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
    lines += ["provider: {type: openai, model: m}", "cases: [{id: a, prompt: *l8}]"]
    return "\n".join(lines) + "\n"


def report_of_huge_completions() -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "suite.yml").write_text(
            "version: 1\nname: big\nprovider: {type: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}\n"
            "sampling: {samples: 10}\nembedding: {enabled: false}\ncases: [{id: a, prompt: q}]\n"
        )
        with (folder / "samples.jsonl").open("w") as handle:
            for i in range(10):
                text = f"{i} " + "lorem ipsum dolor " * (7 * MIB // 18)
                handle.write(json.dumps({"case": "a", "index": i, "text": text}) + "\n")
        started = time.perf_counter()
        args = ["score", str(folder / "samples.jsonl"), "--suite", str(folder / "suite.yml")]
        subprocess.run(
            [sys.executable, "-m", "stabilitygate", *args, "--report-json", str(folder / "r.json")],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - started, (folder / "r.json").stat().st_size


BACKTRACKING_SCHEMA = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}
#: A `command` provider that prints a distinct 7.5 MiB completion for each sample.
DISTINCT_HUGE = "import os; print(os.urandom(3_932_160).hex() + os.environ['STABILITYGATE_SAMPLE_INDEX'])"
#: Runs the command line in this process with a module's bound replaced, then prints the peak RSS (KiB).
DRIVER = (
    "import importlib, resource, sys; module, name, value = sys.argv[1:4]\n"
    "setattr(importlib.import_module(module), name, int(value))\n"
    "from stabilitygate.cli import main; code = main(sys.argv[4:])\n"
    "print(code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)
UNBOUNDED = str(10**15)


def bounded_run(folder: Path, bound: tuple[str, str, str], *args: str) -> tuple[int, int]:
    """(exit code, peak RSS in KiB) of `stabilitygate ARGS` with the bound `(module, name, value)`."""
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *bound, *args], cwd=ROOT, check=True, capture_output=True, text=True
    )
    code, peak = done.stdout.split()[-2:]
    return int(code), int(peak)


def schema_pattern_stopped() -> float:
    spec = AnswerSpec.model_validate({"json": "", "schema": BACKTRACKING_SCHEMA})
    answer = json.dumps({"a": "a" * 40 + "b"})
    return best(refused(lambda: parse_answer(spec, answer)))


def held_text_peaks() -> tuple[int, int]:
    """Peak RSS (KiB) of the run of distinct huge completions: the bound lifted, and kept (scaled)."""
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "suite.yml"
        command = json.dumps([sys.executable, "-c", DISTINCT_HUGE])
        suite.write_text(
            "version: 1\nname: held\nprovider: {type: command, command: " + command + "}\n"
            "sampling: {samples: 24, concurrency: 2, early_stop: false}\nembedding: {enabled: false}\n"
            "cases: [{id: a, prompt: q}]\n"
        )
        peaks = []
        for limit in (UNBOUNDED, str(32 * MIB)):
            bound = ("stabilitygate.sampling.held_texts", "MAX_HELD_CHARS", limit)
            peaks.append(bounded_run(Path(tmp), bound, "run", str(suite), "--no-progress")[1])
        return peaks[0], peaks[1]


def finish_reason_reports() -> tuple[int, int]:
    """Report bytes for 12 replies of 1.3 M-character finish reasons: the bound lifted, and kept."""
    bodies = [
        {"action": "status", "status": 200, "at": [i + 1], "body": json.dumps(_reply(f"{i}" + "x" * 1_300_000))}
        for i in range(12)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "script.json").write_text(json.dumps({"default": "A", "faults": bodies}))
        sizes = []
        for limit in (UNBOUNDED, "64"):
            with scripted_server(folder / "script.json") as base_url:
                suite = folder / "suite.yml"
                suite.write_text(
                    f"version: 1\nname: labels\nprovider: {{type: openai, model: m, base_url: '{base_url}'}}\n"
                    "sampling: {samples: 12, retries: 0}\nembedding: {enabled: false}\ncases: [{id: a, prompt: q}]\n"
                )
                report = folder / "r.json"
                bound = ("stabilitygate.sampling.sampler", "MAX_LABEL_CHARS", limit)
                bounded_run(folder, bound, "run", str(suite), "--no-progress", "--report-json", str(report))
                sizes.append(report.stat().st_size)
        return sizes[0], sizes[1]


def _reply(finish_reason: str) -> dict[str, object]:
    message = {"role": "assistant", "content": "A"}
    return {
        "object": "chat.completion",
        "model": "m",
        "choices": [{"message": message, "finish_reason": finish_reason}],
    }


def main() -> None:
    rng = random.Random(25)
    bomb = alias_bomb()
    seconds = best(refused(lambda: resolve(parse_suite_file(bomb, "bomb.yml"))))
    print(f"YAML alias bomb ({len(bomb)} bytes) refused: {seconds:.4f} s")

    arrays = ("[" + "1," * 500) * (8 * MIB // 1001)
    spec = AnswerSpec.model_validate({"json": ""})
    hunt = best(lambda: parse_answer(spec, arrays))
    print(f"JSON hunt over {len(arrays) / MIB:.1f} MiB of open arrays: {hunt:.3f} s")

    text = "a" * 64 + "b"
    stop = best(refused(lambda: search("^(a|aa)+$", text, where="answer.regex")))
    print(f"regex ^(a|aa)+$ on {len(text)} characters, stopped by its limit: {stop:.2f} s")

    keys = ["sk-" + "".join(rng.choices(string.ascii_letters + string.digits, k=40)) for _ in range(10)]
    secrets = Secrets.of(keys)
    completion = "".join(rng.choices(string.ascii_letters + " \n.,", k=8 * MIB)) + keys[3]
    assert secrets.redact(completion).endswith("***")
    print(f"redacting an 8 MiB completion with 10 secrets: {best(lambda: secrets.redact(completion)):.3f} s")

    lattice = [(rng.choice(["the", " a", "b", "c"]), rng.choice(["x", " y", "z"])) for _ in range(4096)]
    print(f"logprob lattice of 4,096 entries: {best(lambda: lattice_spells(lattice, keys)):.3f} s")

    seconds, size = report_of_huge_completions()
    print(f"score of ten distinct 7 MiB completions: {seconds:.1f} s, report {size:,} bytes")

    print(f"schema pattern ^(a|aa)+$ on 41 characters, stopped by its limit: {schema_pattern_stopped():.2f} s")
    lifted, kept = held_text_peaks()
    print(
        f"peak RSS, 24 distinct 7.5 MiB completions: {lifted / 1024:,.0f} MiB unbounded, {kept / 1024:,.0f} MiB bounded"
    )
    lifted, kept = finish_reason_reports()
    print(f"report of 12 finish reasons of 1.3 M characters: {lifted:,} bytes unbounded, {kept:,} bytes bounded")


if __name__ == "__main__":
    main()
