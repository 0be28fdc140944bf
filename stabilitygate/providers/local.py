"""The `local` provider: SmolLM2-135M-Instruct (or another model on disk) run in-process on the CPU.

No API key, no network at run time. Requests go to the process's shared batching engine
(`local_engine`), so samples of different cases are decoded together in batches whose sizes vary
with arrival, the way a serving engine batches them. Importing this module does not import torch.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from typing_extensions import TypeIs

from stabilitygate.errors import BadInput
from stabilitygate.providers.interface import Completion, FatalProviderError, Provider, Request
from stabilitygate.providers.local_decode import GenerationSpec
from stabilitygate.providers.local_engine import Engine, acquire_engine, release_engine
from stabilitygate.providers.local_model import (
    BUNDLED_INSTALL_HINT,
    BUNDLED_PACKAGE,
    LOCAL_EXTRA_HINT,
    ModelSource,
    load_model,
    resolve_model_source,
)
from stabilitygate.suite.model import ProviderConfig
from stabilitygate.version import __version__

DEFAULT_MAX_TOKENS = 64
DEFAULT_MAX_BATCH = 8
KNOWN_PARAMS = ("temperature", "top_p", "max_tokens", "seed", "max_batch", "logprobs", "top_logprobs")
MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class LocalParams:
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    max_batch: int = DEFAULT_MAX_BATCH
    logprobs: bool = False
    top_logprobs: int = 0  # as in the OpenAI API; >= 2 also reports the runner-up token


def parse_params(params: Mapping[str, object]) -> LocalParams:
    """The decoding settings in `params`; FatalProviderError naming the param when one is unusable."""
    unknown = sorted(set(params) - set(KNOWN_PARAMS))
    if unknown:
        raise _bad_params(f"does not understand params {', '.join(unknown)} (it takes {', '.join(KNOWN_PARAMS)})")
    temperature = _number(params, "temperature", 0.0)
    top_p = _number(params, "top_p", 1.0)
    if temperature < 0:
        raise _bad_params(f"temperature must be >= 0, got {temperature:g}")
    if not 0 < top_p <= 1:
        raise _bad_params(f"top_p must be in (0, 1], got {top_p:g}")
    seed = params.get("seed")
    if seed is not None and not _is_int(seed):
        raise _bad_params(f"seed must be an integer, got {seed!r}")
    logprobs = params.get("logprobs", False)
    if not isinstance(logprobs, bool):
        raise _bad_params(f"logprobs must be true or false, got {logprobs!r}")
    top_logprobs = params.get("top_logprobs", 0)
    if not _is_int(top_logprobs) or not 0 <= top_logprobs <= MAX_TOP_LOGPROBS:
        raise _bad_params(f"top_logprobs must be an integer from 0 to {MAX_TOP_LOGPROBS}, got {top_logprobs!r}")
    return LocalParams(
        temperature=temperature,
        top_p=top_p,
        max_tokens=_positive_int(params, "max_tokens", DEFAULT_MAX_TOKENS),
        seed=seed,
        max_batch=_positive_int(params, "max_batch", DEFAULT_MAX_BATCH),
        logprobs=logprobs,
        top_logprobs=top_logprobs,
    )


def _is_int(value: object) -> TypeIs[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(params: Mapping[str, object], name: str, default: float) -> float:
    value = params.get(name)
    if value is None:
        return default
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _bad_params(f"{name} must be a number, got {value!r}")
    return float(value)


def _positive_int(params: Mapping[str, object], name: str, default: int) -> int:
    value = params.get(name)
    if value is None:
        return default
    if not _is_int(value) or value < 1:
        raise _bad_params(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _bad_params(message: str) -> FatalProviderError:
    return FatalProviderError(f"local provider: {message}", kind="bad_params")


# The image with the local model's dependencies; the Dockerfile sets the pushed reference.
LOCAL_IMAGE_ENV = "STABILITYGATE_LOCAL_IMAGE"
DEFAULT_LOCAL_IMAGE = f"ghcr.io/OWNER/llm-stability-gate:{__version__}-local"
REQUIRED_MODULES = ("torch", "transformers", "gguf")


class LocalConfig(ProviderConfig):
    """`type: local`: a model run in-process (`model`: a GGUF file or model directory; none: SmolLM2)."""

    type: Literal["local"]


def missing_modules(config: ProviderConfig) -> list[str]:
    """The modules the local provider needs for `config` that this install lacks (none imported)."""
    wanted = [*REQUIRED_MODULES, *([BUNDLED_PACKAGE] if config.model is None else [])]
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def unavailable_message(missing: list[str], environ: Mapping[str, str]) -> str:
    image = environ.get(LOCAL_IMAGE_ENV) or DEFAULT_LOCAL_IMAGE
    return (
        f"provider type 'local' is not in this install ({', '.join(missing)} missing): use the image"
        f" {image}, or {LOCAL_EXTRA_HINT} and {BUNDLED_INSTALL_HINT}"
    )


class LocalProvider(Provider):
    """Completions from a model on this machine; one shared engine per model for the whole process.

    `timeout_s` bounds a request's generation once its batch starts. The one-off model load
    (about 20-30 s for the bundled model) happens on the first request, or ahead of time with
    `warm_up()`, so that it does not eat into the sampler's per-request timeout.
    """

    config_model = LocalConfig
    has_fingerprint = True

    def __init__(self, config: LocalConfig, *, environ: Mapping[str, str] | None = None, timeout_s: float = 60) -> None:
        # No key and no network: the environment only says which image has the dependencies.
        missing = missing_modules(config)
        if missing:
            raise BadInput(unavailable_message(missing, {} if environ is None else environ))
        self._config = config
        self._timeout_s = timeout_s
        self._sources: dict[str | None, ModelSource] = {}
        self._engines: dict[ModelSource, Engine] = {}

    async def complete(self, request: Request) -> Completion:
        params = parse_params({**(self._config.params or {}), **request.params})
        engine = self._engine_for(request.model if request.model is not None else self._config.model)
        spec = GenerationSpec(
            messages=tuple(request.messages),
            max_tokens=params.max_tokens,
            temperature=params.temperature,
            top_p=params.top_p,
            seed=params.seed,
            sample_index=request.index,
            max_batch=params.max_batch,
            timeout_s=self._timeout_s,
            logprobs=params.logprobs,
            top_logprobs=params.top_logprobs,
        )
        result = await engine.generate(spec)
        return Completion(
            text=result.text,
            model=result.model_name,
            fingerprint=result.fingerprint,
            usage={"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens},
            finish_reason=result.finish_reason,
            logprobs=result.logprobs,
            extra={"batch_size": result.batch_size, "build": result.build},
        )

    async def warm_up(self) -> None:
        """Load the configured model now, off the event loop (FatalProviderError when it cannot be)."""
        source = self._source_for(self._config.model)
        await asyncio.to_thread(load_model, source)

    def _source_for(self, model: str | None) -> ModelSource:
        source = self._sources.get(model)
        if source is None:
            source = self._sources[model] = resolve_model_source(model)
        return source

    def _engine_for(self, model: str | None) -> Engine:
        source = self._source_for(model)
        engine = self._engines.get(source)
        if engine is None:
            engine = self._engines[source] = acquire_engine(source)
        return engine

    async def aclose(self) -> None:
        engines = list(self._engines.values())
        self._engines.clear()
        for engine in engines:
            await release_engine(engine)
