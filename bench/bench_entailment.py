"""What the entailment judge costs: judge calls per case with 2, 5 and 20 distinct completions.

A one-case suite with `equivalence: {judge: ...}` runs against the scripted OpenAI server on
loopback, which also answers the entailment questions by a rule (tests/support/entailment_server.py:
texts mean the same when they carry the same tag). N = 20 samples spread over D distinct texts,
grouped into M meanings: one meaning (every text a paraphrase), a few, and every text its own.
Printed per row: judge calls per case (what the report's `entailment_calls` says, and what the server
counted), tokens, and the calls a warm judgment cache leaves (expect 0). The greedy clustering asks
2(D - 1) questions when all texts mean the same and D(D - 1)/2 when none do (a pair whose first
direction is not entailment is not asked the other way). About 10 s.

    .venv/bin/python bench/bench_entailment.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stabilitygate import api  # noqa: E402
from tests.pipeline.conftest import write_suite  # noqa: E402
from tests.support.entailment_server import EntailmentServer  # noqa: E402

QUESTION = "When does the shop close?"
SAMPLES = 20
SHAPES = [(2, 1), (2, 2), (5, 1), (5, 2), (5, 5), (20, 1), (20, 3), (20, 20)]  # (distinct, meanings)


def script(distinct: int, meanings: int) -> dict[str, list[tuple[str, int]]]:
    """D texts over M meaning tags, their counts as even as N = 20 allows (the first ones more)."""
    counts = [SAMPLES // distinct + (1 if i < SAMPLES % distinct else 0) for i in range(distinct)]
    texts = [f"answer {i} #meaning{i % meanings}" for i in range(distinct)]
    return {QUESTION: list(zip(texts, counts, strict=True))}


def measure(distinct: int, meanings: int, directory: Path) -> dict[str, int]:
    with EntailmentServer(script(distinct, meanings)) as server:
        judge = {"type": "openai", "model": "judge", "base_url": server.base_url}
        suite = write_suite(
            directory, server.base_url, [{"id": "shop", "prompt": QUESTION}], equivalence={"judge": judge}
        )
        cache = str(directory / "cache")
        # One request at a time: the samples land in the same order in both runs, so the second asks
        # the same ordered pairs (with concurrency, texts seen once may swap places and pose new ones).
        options = {"baseline": directory / "none.json", "samples": SAMPLES, "concurrency": 1, "embedding_cache": cache}
        cold = api.run(suite, **options)
        asked_cold = len(server.judged)
        api.run(suite, **options)
        asked_warm = len(server.judged) - asked_cold
    metrics = cold.cases[0].metrics
    assert metrics.unique_completions == distinct and metrics.semantic_clusters == meanings
    return {
        "calls": metrics.entailment_calls or 0,
        "server": asked_cold,
        "warm": asked_warm,
        "tokens": (metrics.entailment_prompt_tokens or 0) + (metrics.entailment_completion_tokens or 0),
    }


def main() -> int:
    print("| distinct completions | meanings | judge calls per case | asked at the server | with a warm cache | "
          "judge tokens | bound 2(D-1) .. D(D-1)/2 |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- |")
    ok = True
    for distinct, meanings in SHAPES:
        with tempfile.TemporaryDirectory() as tmp:
            row = measure(distinct, meanings, Path(tmp))
        low, high = 2 * (distinct - 1), distinct * (distinct - 1) // 2
        ok &= row["calls"] == row["server"] and row["warm"] == 0
        print(f"| {distinct} | {meanings} | {row['calls']} | {row['server']} | {row['warm']} | {row['tokens']} | "
              f"{min(low, high)} .. {max(low, high)} |")  # fmt: skip
    print("report's entailment_calls == questions the server saw, warm cache asks nothing:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
