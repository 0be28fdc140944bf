"""Benchmark of the `local` provider's engine on this CPU, and its batch-invariance under greedy decoding.

Prints: model load time; decode throughput at batch 1 and batch 8; then, for a few prompts, how many
distinct greedy completions come back when the prompt runs alone versus mixed into batches of
other prompts (batch sizes 2..8, random position), and how far its first-token logits move.

    .venv/bin/python bench/bench_local.py [--max-tokens 32] [--repeats 8] [--quick]

The engine uses every available core unless OMP_NUM_THREADS says otherwise; on a busy machine
OMP_NUM_THREADS=1 is several times faster (threads waiting on each other lose their cores).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# after the path fix above
from stabilitygate.providers.local_decode import GenerationResult, GenerationSpec
from stabilitygate.providers.local_engine import Engine
from stabilitygate.providers.local_model import LoadedModel, load_model, resolve_model_source

TARGETS = [
    "Where was Richard Feynman born? Answer in one sentence.",
    "Write a haiku about the sea.",
    "Explain why the sky is blue in two sentences.",
    "List three prime numbers and explain why they are prime.",
]
FILLERS = [
    "Hi",
    "What is 2+2?",
    "Tell me a long story about a dragon who learns to code in Python and becomes famous.",
    "Translate 'good morning' into French, Spanish and German.",
    "Name a colour.",
    "Summarize the plot of Hamlet in a paragraph, mentioning every main character and their fate.",
    "Give me three tips for a job interview.",
]
LONG_PROMPT = "Write a long, detailed story about a lighthouse keeper and a storm."


def _user(text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": text},)


async def _batch(engine: Engine, prompts: list[str], max_tokens: int) -> tuple[list[GenerationResult], float]:
    """Run `prompts` as one batch: they queue behind a one-token blocker, then the worker takes them together.

    Also returns the seconds from the blocker's end (when the batch starts) to the batch's end.
    """
    before = len(engine.batch_sizes)
    blocker = asyncio.create_task(engine.generate(GenerationSpec(_user("Hello"), max_tokens=1)))
    while len(engine.batch_sizes) == before:
        await asyncio.sleep(0.001)
    pending = [asyncio.ensure_future(engine.generate(GenerationSpec(_user(p), max_tokens=max_tokens))) for p in prompts]
    await blocker
    started = time.perf_counter()
    results = await asyncio.gather(*pending)
    return list(results), time.perf_counter() - started


def throughput(engine: Engine, batch: int, max_tokens: int) -> tuple[float, int]:
    prompts = [f"{LONG_PROMPT} Story number {i + 1}." for i in range(batch)]
    results, wall = asyncio.run(_batch(engine, prompts, max_tokens))
    tokens = sum(r.completion_tokens for r in results)
    return tokens / wall, tokens


def first_token_logit_shift(loaded: LoadedModel, prompts: list[str], position: int) -> float:
    """Largest |logit difference| of prompts[position]'s next-token logits, alone vs left-padded in `prompts`."""
    import torch

    def ids(text: str) -> list[int]:
        chat = loaded.tokenizer.apply_chat_template(list(_user(text)), add_generation_prompt=True, tokenize=False)
        return list(loaded.tokenizer(chat, add_special_tokens=False)["input_ids"])

    def last_logits(prompts: list[list[int]]) -> torch.Tensor:
        width = max(len(p) for p in prompts)
        input_ids = torch.tensor([[loaded.pad_id] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            out = loaded.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, logits_to_keep=1)
        return out.logits[:, -1, :].float()

    alone = last_logits([ids(prompts[position])])[0]
    mixed = last_logits([ids(p) for p in prompts])[position]
    return float((alone - mixed).abs().max())


def invariance(engine: Engine, loaded: LoadedModel, max_tokens: int, repeats: int) -> None:
    rnd = random.Random(20240501)
    print(f"\ngreedy completions of one prompt, {max_tokens} tokens: alone x{repeats} vs mixed x{repeats}")
    for target in TARGETS:
        alone = [
            asyncio.run(engine.generate(GenerationSpec(_user(target), max_tokens=max_tokens))).text
            for _ in range(repeats)
        ]
        mixed: list[tuple[str, int]] = []
        shifts: list[float] = []
        for k in range(repeats):
            size = 2 + k % 7  # batch sizes 2..8
            others = [rnd.choice(FILLERS) for _ in range(size - 1)]
            position = rnd.randrange(size)
            prompts = [*others[:position], target, *others[position:]]
            result = asyncio.run(_batch(engine, prompts, max_tokens))[0][position]
            mixed.append((result.text, result.batch_size))
            shifts.append(first_token_logit_shift(loaded, prompts, position))
        every = Counter(alone) + Counter(text for text, _ in mixed)
        print(
            f"- {target[:48]!r}: distinct alone {len(set(alone))}, mixed {len({t for t, _ in mixed})}, "
            f"together {len(every)}; batch sizes {sorted({b for _, b in mixed})}; "
            f"max |logit shift| of the first token {max(shifts):.2e} "
            f"(alone vs alone {first_token_logit_shift(loaded, [target], 0):.2e})"
        )
        for text, count in every.most_common():
            print(f"    {count:>3} x {text[:100]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=8, help="runs alone and mixed, per prompt")
    parser.add_argument("--quick", action="store_true", help="throughput only, no invariance study")
    args = parser.parse_args()

    source = resolve_model_source(None)
    started = time.perf_counter()
    loaded = load_model(source)
    print(f"model {loaded.name}: loaded in {time.perf_counter() - started:.1f} s (imports included)")
    import torch

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; fingerprint {loaded.fingerprint}")
    engine = Engine(source)
    try:
        throughput(engine, 1, 4)  # warm-up: first calls allocate and pick kernels
        for batch in (1, 8):
            rate, tokens = throughput(engine, batch, args.max_tokens)
            print(f"batch {batch}: {rate:.1f} tokens/s ({tokens} tokens)")
        if not args.quick:
            invariance(engine, loaded, args.max_tokens, args.repeats)
    finally:
        asyncio.run(engine.aclose())


if __name__ == "__main__":
    main()
