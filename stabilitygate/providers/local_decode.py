"""Decoding one batch for the local engine: left-padded prompts, one prefill, then a token per step.

Every row of the batch runs through the same forward passes, so its logits depend on the batch's
padded shape: the float reduction order a serving engine's batching changes, which the gate measures.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from stabilitygate.providers.interface import ProviderError, TokenLogprob
from stabilitygate.providers.local_model import LoadedModel


@dataclass(frozen=True)
class GenerationSpec:
    """One request as the engine sees it: messages already in chat form, decoding settings resolved."""

    messages: tuple[Mapping[str, str], ...]
    max_tokens: int = 64
    temperature: float = 0.0  # 0 = greedy
    top_p: float = 1.0
    seed: int | None = None  # sampling: the generator is seeded with seed + sample_index
    sample_index: int = 0
    max_batch: int = 8
    timeout_s: float | None = None  # generation time allowed once the request's batch starts
    logprobs: bool = False  # record each generated token's log-probability
    top_logprobs: int = 0  # >= 2: also the best other token at each position (the near-tie diagnostic)


@dataclass(frozen=True)
class GenerationResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" | "length"
    batch_size: int  # how many requests shared this request's batch
    model_name: str
    fingerprint: str
    build: str  # the readable description the fingerprint hashes
    logprobs: tuple[TokenLogprob, ...] | None = None


class BatchJob(Protocol):
    """What decoding needs of a queued request: its spec, and whether its caller stopped waiting."""

    @property
    def spec(self) -> GenerationSpec: ...

    @property
    def cancelled(self) -> bool: ...


@dataclass(eq=False)
class _Row:
    """One request's state inside a running batch."""

    job: BatchJob
    prompt_tokens: int
    generator: Any  # torch.Generator for sampling, None for greedy
    tokens: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    outcome: GenerationResult | ProviderError | None = None


def _prompt_ids(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> list[int]:
    chat = [{"role": "system" if m["role"] == "developer" else m["role"], "content": m["content"]} for m in messages]
    if tokenizer.chat_template:
        text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    else:  # a base model without a template: the contents, one paragraph each
        text = "\n\n".join(m["content"] for m in chat) + "\n\n"
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def decode_batch(
    loaded: LoadedModel, batch: Sequence[BatchJob], stopping: Callable[[], bool]
) -> list[GenerationResult | ProviderError]:
    """Left-pad the prompts, prefill once, then decode one token per step for every row still running."""
    import torch

    rows: list[_Row] = []
    prompts: list[list[int]] = []
    for job in batch:
        ids = _prompt_ids(loaded.tokenizer, job.spec.messages)
        generator = None
        if job.spec.temperature > 0:
            generator = torch.Generator()
            if job.spec.seed is None:
                generator.seed()
            else:
                generator.manual_seed((job.spec.seed + job.spec.sample_index) % (1 << 63))
        row = _Row(job, len(ids), generator)
        if loaded.max_positions is not None and len(ids) + job.spec.max_tokens > loaded.max_positions:
            row.outcome = ProviderError(
                f"prompt ({len(ids)} tokens) plus max_tokens ({job.spec.max_tokens}) exceeds the model's "
                f"context of {loaded.max_positions} tokens",
                retryable=False,
                kind="too_long",
            )
        rows.append(row)
        prompts.append(ids)

    # Rows refused before starting take no part in the batch's shapes.
    active = [i for i, row in enumerate(rows) if row.outcome is None]
    if active:
        _decode_rows(loaded, [rows[i] for i in active], [prompts[i] for i in active], stopping)
    return [row.outcome for row in rows if row.outcome is not None]


def _decode_rows(
    loaded: LoadedModel, rows: Sequence[_Row], prompts: Sequence[list[int]], stopping: Callable[[], bool]
) -> None:
    import torch

    width = max(len(p) for p in prompts)
    input_ids = torch.tensor([[loaded.pad_id] * (width - len(p)) + p for p in prompts], dtype=torch.long)
    mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], dtype=torch.long)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    started = time.monotonic()
    cache = None
    with torch.inference_mode():
        while True:
            out = loaded.model(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float()
            chosen = logits.argmax(dim=-1)
            # Log-probabilities of the model's own distribution (before temperature), as APIs report them.
            logp = torch.log_softmax(logits, dim=-1) if any(r.job.spec.logprobs for r in rows) else None
            elapsed = time.monotonic() - started
            for i, row in enumerate(rows):
                if row.outcome is not None:
                    continue
                token = int(chosen[i]) if row.generator is None else _sample(logits[i], row)
                entry = _token_logprob(loaded, logp[i], token, row) if logp is not None else None
                _advance(loaded, row, token, entry, len(rows), elapsed, stopping())
            if all(row.outcome is not None for row in rows):
                break
            next_ids = [row.tokens[-1] if row.outcome is None else loaded.pad_id for row in rows]
            input_ids = torch.tensor(next_ids, dtype=torch.long).unsqueeze(-1)
            mask = torch.cat([mask, torch.ones((len(rows), 1), dtype=torch.long)], dim=-1)
            positions = positions[:, -1:] + 1


def _advance(
    loaded: LoadedModel,
    row: _Row,
    token: int,
    entry: TokenLogprob | None,
    batch_size: int,
    elapsed: float,
    stopping: bool,
) -> None:
    """Append one token to a row and settle it when it stopped, ran out of tokens, time or interest."""
    spec = row.job.spec
    if row.job.cancelled:
        row.outcome = ProviderError("request cancelled", retryable=True, kind="cancelled")
        return
    if stopping:
        row.outcome = ProviderError("the local engine is closed", retryable=False, kind="closed")
        return
    if token in loaded.stop_ids:
        row.outcome = _result(loaded, row, "stop", batch_size)
        return
    row.tokens.append(token)
    if entry is not None:
        row.logprobs.append(entry)
    if len(row.tokens) >= spec.max_tokens:
        row.outcome = _result(loaded, row, "length", batch_size)
    elif spec.timeout_s is not None and elapsed > spec.timeout_s:
        row.outcome = ProviderError(
            f"local generation took more than {spec.timeout_s:g} s", retryable=True, kind="timeout"
        )


def _token_logprob(loaded: LoadedModel, logp: Any, token: int, row: _Row) -> TokenLogprob | None:
    if not row.job.spec.logprobs:
        return None
    runner_up: str | None = None
    runner_up_logprob: float | None = None
    if row.job.spec.top_logprobs >= 2:
        values, ids = logp.topk(2)
        other = 1 if int(ids[0]) == token else 0
        runner_up = loaded.tokenizer.decode([int(ids[other])])
        runner_up_logprob = float(values[other])
    return TokenLogprob(loaded.tokenizer.decode([token]), float(logp[token]), runner_up, runner_up_logprob)


def _sample(logits: Any, row: _Row) -> int:
    """Temperature and nucleus (top_p) sampling with the row's own generator, so a seed reproduces it."""
    import torch

    spec = row.job.spec
    probs = torch.softmax(logits / spec.temperature, dim=-1)
    if spec.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        keep = (sorted_probs.cumsum(-1) - sorted_probs) < spec.top_p  # the top token is always kept
        probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_probs[keep])
    return int(torch.multinomial(probs, 1, generator=row.generator))


def _result(loaded: LoadedModel, row: _Row, finish_reason: str, batch_size: int) -> GenerationResult:
    text = loaded.tokenizer.decode(row.tokens, skip_special_tokens=True)
    return GenerationResult(
        text=text,
        prompt_tokens=row.prompt_tokens,
        completion_tokens=len(row.tokens),
        finish_reason=finish_reason,
        batch_size=batch_size,
        model_name=loaded.name,
        fingerprint=loaded.fingerprint,
        build=loaded.build,
        logprobs=tuple(row.logprobs) if row.job.spec.logprobs else None,
    )
