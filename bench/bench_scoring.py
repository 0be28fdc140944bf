"""Benchmark of scoring: how fast measure_case is, and how much of the time is the gate's own work.

    .venv/bin/python bench/bench_scoring.py [--cases 1000] [--samples 20] [--big 100000] [--no-semantic]

1. Writes a samples file of CASES x SAMPLES realistic completions (about 3 distinct texts per case), reads
   it back and scores every case through measure_case with the real embedding model (cache disabled).
   Prints samples per second and the share of the time spent outside the embedding model's forward passes
   (target: the gate's own work < 20%).
2. Scores BIG samples (BIG / SAMPLES cases) without embeddings: peak memory (target < 1 GiB) and the
   gate's own cost per sample, parsing and metrics (target < 1 ms). Also the worst case where every
   sample of a case is different.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stabilitygate.measure.case import measure_case
from stabilitygate.samples import Sample
from stabilitygate.suite.model import AnswerSpec, Message, ProviderConfig, ResolvedCase, Thresholds

PEOPLE = [
    ("Richard Feynman", "Queens", "New York"),
    ("Marie Curie", "Warsaw", "Poland"),
    ("Alan Turing", "Maida Vale", "London"),
    ("Ada Lovelace", "Marylebone", "London"),
    ("Emmy Noether", "Erlangen", "Bavaria"),
    ("Srinivasa Ramanujan", "Erode", "Madras Presidency"),
    ("Grace Hopper", "Manhattan", "New York"),
    ("Niels Bohr", "Copenhagen", "Denmark"),
    ("Lise Meitner", "Leopoldstadt", "Vienna"),
    ("Enrico Fermi", "Rome", "Italy"),
    ("Chien-Shiung Wu", "Liuhe", "Jiangsu"),
    ("Paul Dirac", "Bristol", "England"),
    ("Rosalind Franklin", "Notting Hill", "London"),
    ("John von Neumann", "Budapest", "Hungary"),
    ("Dorothy Hodgkin", "Cairo", "Egypt"),
    ("Kurt Goedel", "Brno", "Moravia"),
]
KINDS = ("json", "choice", "number", "regex", "text")
SPECS = {
    "json": {"json": "/city"},
    "choice": {"choice": ["A", "B", "C", "D"]},
    "number": {"number": True},
    "regex": {"regex": r"born in ([A-Z][\w-]+)"},
    "text": {"text": {"normalize": ["strip", "lower", "whitespace", "punctuation"]}},
}


def variants(i: int, kind: str) -> list[str]:
    """Three completions a model might give for case i: the usual one, a rewording, a different answer."""
    person, city, region = PEOPLE[i % len(PEOPLE)]
    year = 1850 + (i * 7) % 170
    if kind == "json":
        return [
            json.dumps({"city": city, "region": region, "year": year}),
            f'```json\n{{\n  "year": {year},\n  "city": "{city}",\n  "region": "{region}"\n}}\n```',
            json.dumps({"city": region, "region": region, "year": year}),
        ]
    if kind == "choice":
        return [
            f"{person} was born in {city} in {year}, so the answer is (B).",
            f"Looking at the options, {city} matches the record for {person}.\nAnswer: **B**",
            f"{person} is usually associated with {region}; the answer is (C).",
        ]
    if kind == "number":
        total = 1000 + i * 37
        return [
            f"Adding the {year} figures for {city} gives a total of {total:,}.",
            f"The total is {total}.",
            f"Adding the {year} figures for {city} gives a total of {total + 10:,}.",
        ]
    return [
        f"{person} was born in {city}, {region}, in {year}.",
        f"{person} was born in {city} in {year}, according to most biographies.",
        f"Born in {year}, {person} grew up in {region}, far from {city}.",
    ]


def make_case(i: int, samples: int) -> ResolvedCase:
    kind = KINDS[i % len(KINDS)]
    return ResolvedCase(
        id=f"case-{i:05d}",
        line=None,
        messages=(Message(role="user", content=f"Question {i}"),),
        provider=ProviderConfig(type="openai", model="bench-model"),
        thresholds=Thresholds(),
        answer=AnswerSpec.model_validate(SPECS[kind]),
        expected=None,
        samples=samples,
    )


def generate(cases: int, samples: int, *, distinct_every_sample: bool = False) -> Iterator[dict[str, Any]]:
    rng = random.Random(7)
    for i in range(cases):
        texts = variants(i, KINDS[i % len(KINDS)])
        for k in range(samples):
            pick = rng.choices(texts, weights=(15, 4, 1))[0]
            text = f"{texts[k % 3]} (draft {k})" if distinct_every_sample else pick
            yield {
                "case": f"case-{i:05d}",
                "index": k,
                "text": text,
                "error": None,
                "latency_ms": 420.0,
                "fingerprint": "fp_bench",
                "model": "bench-model",
                "usage": {"prompt_tokens": 40, "completion_tokens": len(text) // 4},
                "finish_reason": "stop",
            }


def write_samples(path: Path, rows: Iterator[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def read_samples(path: Path) -> dict[str, list[Sample]]:
    by_case: dict[str, list[Sample]] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            by_case.setdefault(data["case"], []).append(Sample(**data))
    return by_case


def score(
    cases: Sequence[ResolvedCase], by_case: dict[str, list[Sample]], embedder: Any, *, ahead: bool = False
) -> float:
    started = time.perf_counter()
    if ahead and embedder is not None:
        embedder.embed(sorted({s.text for group in by_case.values() for s in group if s.text is not None}))
    for case in cases:
        measure_case(case, by_case[case.id], embedder=embedder)
    return time.perf_counter() - started


def bench_without_embeddings(workdir: Path, total: int, samples: int) -> None:
    n_cases = total // samples
    cases = [make_case(i, samples) for i in range(n_cases)]
    for label, distinct in (("typical, ~3 distinct texts a case", False), ("worst case, every sample different", True)):
        path = workdir / f"samples-{total}-{'distinct' if distinct else 'typical'}.jsonl"
        write_samples(path, generate(n_cases, samples, distinct_every_sample=distinct))
        started = time.perf_counter()
        by_case = read_samples(path)
        read_s = time.perf_counter() - started
        elapsed = score(cases, by_case, None)
        del by_case
        tracemalloc.start()
        by_case = read_samples(path)
        score(cases, by_case, None)
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del by_case
        per_sample_ms = elapsed / total * 1000
        print(f"\n{total:,} samples without embeddings ({label}, {n_cases:,} cases x {samples}):")
        print(f"  reading the samples file: {read_s:.2f} s ({path.stat().st_size / 2**20:.1f} MiB)")
        print(f"  scoring: {elapsed:.2f} s, {total / elapsed:,.0f} samples/s")
        print(f"  gate's own cost per sample (parsing + metrics): {per_sample_ms:.4f} ms  (target < 1 ms)")
        print(f"  peak traced Python memory (samples loaded + scoring): {peak / 2**20:.1f} MiB  (target < 1024 MiB)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  process peak RSS so far (interpreter and libraries included): {rss:.0f} MiB")


def bench_with_embeddings(workdir: Path, n_cases: int, samples: int, *, ahead: bool) -> None:
    from stabilitygate.measure.embedder import Embedder

    path = workdir / "samples-semantic.jsonl"
    write_samples(path, generate(n_cases, samples))
    by_case = read_samples(path)
    cases = [make_case(i, samples) for i in range(n_cases)]
    embedder = Embedder(cache_dir="")  # the cache disabled: time the model itself
    started = time.perf_counter()
    embedder.embed(["load the model before timing"])
    load_s = time.perf_counter() - started
    model_before = embedder.seconds_in_model
    elapsed = score(cases, by_case, embedder, ahead=ahead)
    in_model = embedder.seconds_in_model - model_before
    total = n_cases * samples
    distinct = len({s.text for group in by_case.values() for s in group})
    how = "all distinct texts embedded ahead in one call" if ahead else "embedded case by case"
    print(f"\n{total:,} samples with embeddings ({n_cases:,} cases x {samples}, {distinct:,} distinct texts, {how}):")
    print(f"  model load (once, not in the figures below): {load_s:.1f} s")
    print(f"  texts run through the model: {embedder.texts_embedded - 1:,} ({in_model:.1f} s in forward passes)")
    print(f"  per text: {in_model / max(embedder.texts_embedded - 1, 1) * 1000:.1f} ms in the model")
    print(f"  scoring: {elapsed:.1f} s, {total / elapsed:,.0f} samples/s")
    print(
        f"  share of the time outside the embedding model (gate's own work): {(elapsed - in_model) / elapsed:.1%}"
        "  (target < 20%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--big", type=int, default=100_000, help="samples scored without embeddings")
    parser.add_argument("--no-semantic", action="store_true", help="skip the part that loads the model")
    parser.add_argument("--torch-threads", type=int, help="torch intra-op threads (default: torch's choice)")
    parser.add_argument(
        "--per-case", action="store_true", help="let measure_case embed each case's texts (none embedded ahead)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-scoring-") as tmp:
        workdir = Path(tmp)
        # Without embeddings first, so peak RSS is not the model's.
        bench_without_embeddings(workdir, args.big, args.samples)
        if not args.no_semantic:
            if args.torch_threads:
                import torch

                torch.set_num_threads(args.torch_threads)
            bench_with_embeddings(workdir, args.cases, args.samples, ahead=not args.per_case)


if __name__ == "__main__":
    main()
