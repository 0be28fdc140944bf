"""Decoding through the engine with the bundled model: token counts, greedy parity, seeds, the context limit.

The model loads once per process (the `local_model` cache, shared with the engine tests); max_tokens stays small.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from stabilitygate.providers.interface import ProviderError
from stabilitygate.providers.local_decode import GenerationSpec
from stabilitygate.providers.local_engine import Engine
from stabilitygate.providers.local_model import load_model, resolve_model_source


def _user(text: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": text},)


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    source = resolve_model_source(None)
    load_model(source)  # the ~20 s load, once per process
    engine = Engine(source)
    yield engine
    asyncio.run(engine.aclose())


@pytest.mark.slow
def test_a_completion_comes_back_with_exact_token_counts(engine: Engine) -> None:
    loaded = load_model(engine.source)
    messages = _user("Count from one to twenty.")
    result = asyncio.run(engine.generate(GenerationSpec(messages, max_tokens=6)))
    prompt_text = loaded.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
    assert result.prompt_tokens == len(loaded.tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    assert result.finish_reason == "length"
    assert result.completion_tokens == 6
    assert result.text.strip()
    assert result.fingerprint.startswith("local_")
    assert "dtype=float32" in result.build


@pytest.mark.slow
def test_greedy_decoding_matches_transformers_generate_and_repeats(engine: Engine) -> None:
    import torch

    loaded = load_model(engine.source)
    messages = _user("What is the capital of France?")
    texts = [asyncio.run(engine.generate(GenerationSpec(messages, max_tokens=12))).text for _ in range(3)]
    assert len(set(texts)) == 1
    prompt_text = loaded.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
    ids = torch.tensor([loaded.tokenizer(prompt_text, add_special_tokens=False)["input_ids"]])
    with torch.inference_mode():
        out = loaded.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False)
    assert texts[0] == loaded.tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)


@pytest.mark.slow
def test_seeded_sampling_reproduces_per_sample_index(engine: Engine) -> None:
    def draw(index: int) -> str:
        spec = GenerationSpec(
            _user("Invent a name for a cat."), max_tokens=8, temperature=1.5, seed=7, sample_index=index
        )
        return asyncio.run(engine.generate(spec)).text

    first = draw(0)
    assert draw(0) == first
    assert len({first, draw(1), draw(2), draw(3)}) > 1


@pytest.mark.slow
def test_a_prompt_past_the_context_is_refused_without_running(engine: Engine) -> None:
    before = list(engine.batch_sizes)
    with pytest.raises(ProviderError, match="exceeds the model's context") as refused:
        asyncio.run(engine.generate(GenerationSpec(_user("word " * 9000), max_tokens=8)))
    assert refused.value.kind == "too_long"
    assert not refused.value.retryable
    assert engine.batch_sizes == [*before, 1]
