"""The `command` provider: any program that reads a prompt and prints a completion.

The program gets the last user message as text on stdin (`input: stdin`, the default) or the
whole request as one JSON document (`input: json`); its stdout is the completion. No shell is
involved unless the suite asks for one, so `;` or `$(...)` in an argv list stay literal.

It inherits the environment but the runner's own variables: `INPUT_*` (the Action's inputs, the
job's token among them) and `ACTIONS_*` (the runner's tokens) reach it only when the suite names
them in `pass_env` (docs/design.md §11).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Literal, TypeVar

from pydantic import Field, field_validator

from stabilitygate.errors import BadInput
from stabilitygate.providers.config import KeyedConfig
from stabilitygate.providers.interface import (
    Completion,
    FatalProviderError,
    Provider,
    ProviderError,
    Request,
)
from stabilitygate.secrets import Secrets, environment_secrets
from stabilitygate.suite.model import ADDRESS, Implied

MAX_STDOUT_BYTES = 8 * 1024 * 1024
STDERR_TAIL_BYTES = 64 * 1024
STDERR_SHOWN_CHARS = 500
#: Variables of the runner that a command does not inherit unless the suite passes them on purpose.
WITHHELD_PREFIXES = ("INPUT_", "ACTIONS_")
EX_TEMPFAIL = 75  # sysexits.h: "try again later", the one exit status worth retrying
REAP_WAIT_S = 5.0
_CHUNK = 64 * 1024
#: How a config that names no `input` hands the prompt over.
DEFAULT_INPUT = "stdin"

Sleep = Callable[[float], Awaitable[None]]
_T = TypeVar("_T")


class _TooLarge(Exception):
    pass


class CommandConfig(KeyedConfig):
    """`type: command`: a program run once per sample."""

    type: Literal["command"]
    command: list[str] | str = Field(description="command: argv list, or a string with shell")
    shell: Annotated[bool | None, Implied(False)] = Field(
        None, description="command: run through the shell (off by default)"
    )
    input: Annotated[Literal["stdin", "json"] | None, Implied(DEFAULT_INPUT)] = Field(
        None, description="command: the prompt as text on stdin, or the request as JSON"
    )
    pass_env: Annotated[list[str] | None, ADDRESS] = Field(
        None,
        description="command: runner variables (INPUT_*, ACTIONS_*) the program may see; the others are withheld",
    )

    @field_validator("command")
    @classmethod
    def _names_a_program(cls, value: list[str] | str) -> list[str] | str:
        if not value or (isinstance(value, list) and not value[0]):
            raise ValueError("expected a program to run")
        return value


class CommandProvider(Provider):
    """Runs the suite's command once per sample, as an asyncio subprocess in its own process group.

    Every wait it bounds (the command's `timeout_s`, the grace for reaping it) ends when `sleep`
    returns, so that tests decide when time is up instead of racing the clock.
    """

    config_model = CommandConfig
    has_fingerprint = False

    def __init__(
        self,
        config: CommandConfig,
        *,
        environ: Mapping[str, str] | None = None,
        timeout_s: float = 60,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._argv, self._shell = _command_of(config)
        self._input = config.input or DEFAULT_INPUT
        given = dict(os.environ if environ is None else environ)
        self._environ = child_environment(given, config.pass_env or ())
        self._timeout_s = timeout_s
        self._sleep = sleep
        key_name = config.api_key_env
        # The child may echo any key it sees, or one it found elsewhere, on stderr: never repeat one.
        key = [given[key_name]] if key_name and given.get(key_name) else []
        self._secrets = Secrets.of([*key, *environment_secrets(given)])

    async def complete(self, request: Request) -> Completion:
        stdin = self._stdin_of(request)
        env = {
            **self._environ,
            "STABILITYGATE_CASE_ID": request.case_id,
            "STABILITYGATE_SAMPLE_INDEX": str(request.index),
            "STABILITYGATE_IDEMPOTENCY_KEY": request.idempotency_key,
        }
        if request.model:
            env["STABILITYGATE_MODEL"] = request.model
        proc = await self._spawn(env)
        try:
            stdout, stderr_tail = await _within(self._timeout_s, self._communicate(proc, stdin), self._sleep)
        except TimeoutError as exc:
            raise ProviderError(
                f"command timed out after {self._timeout_s:g} s and was killed",
                retryable=True,
                kind="timeout",
            ) from exc
        except _TooLarge as exc:
            raise ProviderError(
                f"command wrote more than {MAX_STDOUT_BYTES} bytes on stdout",
                retryable=False,
                kind="too_large",
            ) from exc
        finally:
            await _reap(proc, self._sleep)
        status = proc.returncode
        if status != 0:
            raise self._exit_error(status, stderr_tail)
        text = stdout.decode("utf-8", errors="replace")
        return Completion(text=_strip_newline(text), model=request.model)

    def _stdin_of(self, request: Request) -> bytes:
        if self._input == "json":
            document = {
                "messages": [dict(m) for m in request.messages],
                "model": request.model,
                "params": dict(request.params),
                "case_id": request.case_id,
                "sample_index": request.index,
                "idempotency_key": request.idempotency_key,
            }
            return (json.dumps(document, ensure_ascii=False, default=str) + "\n").encode()
        return _last_user_message(request.messages).encode()

    async def _spawn(self, env: dict[str, str]) -> asyncio.subprocess.Process:
        pipe = asyncio.subprocess.PIPE
        # start_new_session: its own process group, so a timeout kills its children too.
        try:
            if self._shell:
                line = self._argv[0] if len(self._argv) == 1 else shlex.join(self._argv)
                return await asyncio.create_subprocess_shell(
                    line, stdin=pipe, stdout=pipe, stderr=pipe, env=env, start_new_session=True
                )
            return await asyncio.create_subprocess_exec(
                *self._argv, stdin=pipe, stdout=pipe, stderr=pipe, env=env, start_new_session=True
            )
        except FileNotFoundError as exc:
            raise FatalProviderError(f"command not found: {self._argv[0]}", kind="not_found") from exc
        except PermissionError as exc:
            raise FatalProviderError(f"command is not executable: {self._argv[0]}", kind="not_found") from exc
        except OSError as exc:
            raise FatalProviderError(f"cannot start the command: {exc.strerror}", kind="spawn") from exc

    async def _communicate(self, proc: asyncio.subprocess.Process, stdin: bytes) -> tuple[bytes, bytes]:
        assert proc.stdin and proc.stdout and proc.stderr
        results = await asyncio.gather(_feed(proc.stdin, stdin), _read_bounded(proc.stdout), _read_tail(proc.stderr))
        await proc.wait()
        return results[1], results[2]

    def _exit_error(self, status: int | None, stderr_tail: bytes) -> ProviderError:
        # Redacted whole before its last line is taken: a key echoed over two lines loses both halves.
        secrets = self.redacting(self._secrets)
        tail = secrets.redact(stderr_tail.decode("utf-8", errors="replace"))
        last = secrets.preview(_last_line(tail), STDERR_SHOWN_CHARS)
        if status is not None and status < 0:
            what = f"command was killed by signal {-status}"
        else:
            what = f"command exited with status {status}"
        return ProviderError(
            f"{what}: {last}" if last else what,
            retryable=status == EX_TEMPFAIL,
            kind=f"exit_{status}",
        )


def child_environment(environ: Mapping[str, str], passed: Sequence[str]) -> dict[str, str]:
    """The environment a command runs in: `environ` without the runner's variables it was not passed."""
    keep = {name.upper() for name in passed}
    return {
        name: value
        for name, value in environ.items()
        if not name.upper().startswith(WITHHELD_PREFIXES) or name.upper() in keep
    }


def _command_of(config: CommandConfig) -> tuple[list[str], bool]:
    command, shell = config.command, bool(config.shell)
    if isinstance(command, str):
        if shell:
            argv = [command]
        else:
            try:
                argv = shlex.split(command)
            except ValueError as exc:
                raise BadInput(f"provider.command: cannot split {command!r}: {exc}") from exc
    else:
        argv = list(command or [])
    if not argv or not argv[0]:
        raise BadInput("provider.command: expected a program to run")
    return argv, shell


def _last_user_message(messages: Sequence[Mapping[str, str]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content", "")
    return messages[-1].get("content", "") if messages else ""


async def _feed(stream: asyncio.StreamWriter, data: bytes) -> None:
    # A command that never reads its stdin (or exits early) closes the pipe: that is not an error.
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.write(data)
        await stream.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stream.close()
        await stream.wait_closed()


async def _read_bounded(stream: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(_CHUNK):
        size += len(chunk)
        if size > MAX_STDOUT_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_tail(stream: asyncio.StreamReader) -> bytes:
    tail = b""
    while chunk := await stream.read(_CHUNK):
        tail = (tail + chunk)[-STDERR_TAIL_BYTES:]
    return tail


async def _within(seconds: float, work: Awaitable[_T], sleep: Sleep) -> _T:
    """What `work` gives, or TimeoutError (with `work` cancelled) when `sleep(seconds)` returns first."""
    task = asyncio.ensure_future(work)
    timer = asyncio.ensure_future(sleep(seconds))
    try:
        await asyncio.wait((task, timer), return_when=asyncio.FIRST_COMPLETED)
    finally:
        timer.cancel()
        task.cancel()  # no-op once it is done; otherwise the time ran out (or our caller gave up)
        await asyncio.gather(task, timer, return_exceptions=True)
    if task.cancelled():
        raise TimeoutError(f"no result within {seconds:g} s")
    return task.result()


async def _reap(proc: asyncio.subprocess.Process, sleep: Sleep) -> None:
    """Kill what is left of the process group (children it left behind, or all of it on timeout)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    # wait() also waits for the pipes to close; a grandchild that left the group may hold them.
    try:
        await _within(REAP_WAIT_S, proc.wait(), sleep)
    except TimeoutError:
        # Stop listening to the pipes it holds. asyncio.subprocess exposes no public close, and the
        # transport attribute has been there since the module was written.
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _strip_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith("\n") else text
