"""What the hostile inputs of issue 25 cost now, at the attacks' own sizes (the tests use small ones).

Prints, best of REPEATS, in seconds:
- refusing the 611-byte YAML alias bomb (9^9 nodes expanded; it ran past 60 s before);
- the JSON hunt (`answer: {json: ""}`) over an 8 MiB completion of open arrays (2,000 starts, each
  read to the end, before: about 40 s per MB);
- a regex that backtracks without end, stopped by its time limit;
- redacting an 8 MiB completion with ten secrets, the skeleton included;
- the logprob lattice check over 4,096 entries with runner-ups;
- the report of ten distinct 7 MiB completions, written by `stabilitygate score` (73 MB before).

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


if __name__ == "__main__":
    main()
