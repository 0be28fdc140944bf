"""The command provider against real subprocesses (tiny Python scripts and coreutils)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import pytest

from stabilitygate.errors import BadInput
from stabilitygate.providers import command as command_module
from stabilitygate.providers.command import REAP_WAIT_S, CommandConfig, CommandProvider, Sleep
from stabilitygate.providers.interface import Completion, FatalProviderError, ProviderError, Request

PY = sys.executable
# How long a test's child process sleeps unless it is killed. Only a broken provider lets it run
# that long, and then the test fails on what the child did, not on how long it took.
HELD_S = 120


def request(index: int = 0, *, prompt: str = "hello", system: str | None = None, **params: Any) -> Request:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return Request(
        case_id="case-1",
        index=index,
        messages=tuple(messages),
        model="tiny-model",
        params=params,
        idempotency_key=f"case-1:{index}",
    )


def provider(
    timeout_s: float = 10, environ: dict[str, str] | None = None, sleep: Sleep = asyncio.sleep, **config: Any
) -> CommandProvider:
    return CommandProvider(CommandConfig(type="command", **config), environ=environ, timeout_s=timeout_s, sleep=sleep)


def complete(p: CommandProvider, req: Request | None = None) -> Completion:
    return asyncio.run(p.complete(req or request()))


def failure(p: CommandProvider, req: Request | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        complete(p, req)
    return info.value


def test_stdin_mode_sends_the_last_user_message_and_strips_one_trailing_newline() -> None:
    script = "import sys; text = sys.stdin.read(); print(repr(text)); print(text.upper())"
    done = complete(provider(command=[PY, "-c", script]), request(prompt="what is 2+2?", system="be terse"))
    assert done.text == "'what is 2+2?'\nWHAT IS 2+2?"
    assert done.model == "tiny-model"
    assert done.fingerprint is None
    assert CommandProvider.has_fingerprint is False


def test_only_one_trailing_newline_is_stripped() -> None:
    done = complete(provider(command=[PY, "-c", "import sys; sys.stdout.write('a\\n\\n')"]))
    assert done.text == "a\n"


def test_json_mode_sends_the_whole_request() -> None:
    script = "import sys, json; print(json.dumps(json.load(sys.stdin), sort_keys=True))"
    p = provider(command=[PY, "-c", script], input="json")
    done = complete(p, request(3, prompt="Q?", system="S", temperature=0, seed=7))
    assert json.loads(done.text) == {
        "case_id": "case-1",
        "idempotency_key": "case-1:3",
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q?"}],
        "model": "tiny-model",
        "params": {"seed": 7, "temperature": 0},
        "sample_index": 3,
    }


def test_the_request_is_also_described_in_the_environment() -> None:
    script = "import os; print(os.environ['STABILITYGATE_SAMPLE_INDEX'], os.environ['STABILITYGATE_CASE_ID'])"
    done = complete(provider(command=[PY, "-c", script]), request(5))
    assert done.text == "5 case-1"


def test_environ_given_to_the_provider_is_the_childs_environment() -> None:
    env = {**os.environ, "GREETING": "bonjour"}
    done = complete(provider(environ=env, command=[PY, "-c", "import os; print(os.environ['GREETING'])"]))
    assert done.text == "bonjour"


def test_no_shell_by_default_so_a_semicolon_stays_literal(tmp_path: Path) -> None:
    marker = tmp_path / "injected"
    done = complete(provider(command=["echo", f"hi; touch {marker}"]))
    assert done.text == f"hi; touch {marker}"
    assert not marker.exists()


def test_a_string_without_shell_is_split_like_a_shell_would_but_not_run_by_one(tmp_path: Path) -> None:
    marker = tmp_path / "injected"
    done = complete(provider(command=f"{PY} -c 'import sys; print(sys.argv[1:])' ';' 'touch {marker}'"))
    assert done.text == f"[';', 'touch {marker}']"
    assert not marker.exists()


def test_shell_true_runs_the_string_through_the_shell() -> None:
    done = complete(provider(command="echo $((1 + 2)) | tr 3 X", shell=True))
    assert done.text == "X"


def test_a_timeout_kills_the_command_and_its_children(tmp_path: Path) -> None:
    fifo = tmp_path / "alive"
    os.mkfifo(fifo)
    # The command's own child holds the FIFO open for as long as it lives: end of file on it is its death.
    grandchild = (
        f"import os, time; f = open({str(fifo)!r}, 'w'); print(os.getpid(), file=f, flush=True); "
        f"time.sleep({HELD_S}); print('survived', file=f)"
    )
    script = (
        f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {grandchild!r}]); time.sleep({HELD_S})"
    )
    asked: list[float] = []
    opened: list[TextIO] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        if len(asked) == 1:  # the timeout is up once the grandchild is running
            opened.append(await asyncio.to_thread(open, fifo))
            await asyncio.to_thread(opened[0].readline)
        else:  # the grace for reaping never runs out: only the killed group's exit can end the wait
            await asyncio.Event().wait()

    error = failure(provider(timeout_s=1.0, sleep=sleep, command=[PY, "-c", script]))
    with opened[0] as alive:
        assert alive.read() == "", "the command's child survived the timeout"
    assert asked == [1.0, REAP_WAIT_S]
    assert error.kind == "timeout"
    assert error.retryable is True
    assert "timed out after 1 s" in str(error)


def test_a_cancelled_sample_kills_its_command(tmp_path: Path) -> None:
    fifo = tmp_path / "alive"
    os.mkfifo(fifo)
    script = (
        f"import os, time; f = open({str(fifo)!r}, 'w'); print(os.getpid(), file=f, flush=True); "
        f"time.sleep({HELD_S}); print('survived', file=f)"
    )
    p = provider(timeout_s=HELD_S, command=[PY, "-c", script])

    async def cancel_once_running() -> tuple[bool, str]:
        sample = asyncio.create_task(p.complete(request()))
        alive = await asyncio.to_thread(open, fifo)
        with alive:
            await asyncio.to_thread(alive.readline)  # the command is running
            sample.cancel()  # as the sampler's own timeout or Ctrl-C does
            with contextlib.suppress(asyncio.CancelledError):
                await sample
            return sample.cancelled(), await asyncio.to_thread(alive.read)  # end of file: the command is gone

    assert asyncio.run(cancel_once_running()) == (True, "")


def test_nonzero_exit_reports_the_last_stderr_line_and_is_not_retryable() -> None:
    script = "import sys; sys.stderr.write('loading\\nfatal: no such model\\n\\n'); sys.exit(2)"
    error = failure(provider(command=[PY, "-c", script]))
    assert not isinstance(error, FatalProviderError)
    assert error.retryable is False
    assert error.kind == "exit_2"
    assert str(error) == "command exited with status 2: fatal: no such model"


def test_exit_75_tempfail_is_retryable() -> None:
    error = failure(provider(command=[PY, "-c", "import sys; sys.exit(75)"]))
    assert error.retryable is True
    assert error.kind == "exit_75"


def test_a_key_echoed_on_stderr_is_redacted() -> None:
    env = {**os.environ, "MY_KEY": "sk-very-secret-123"}
    script = "import os, sys; sys.stderr.write('bad key ' + os.environ['MY_KEY']); sys.exit(1)"
    error = failure(provider(environ=env, api_key_env="MY_KEY", command=[PY, "-c", script]))
    assert "sk-very-secret-123" not in str(error)
    assert "bad key ***" in str(error)


def test_a_missing_program_is_fatal() -> None:
    error = failure(provider(command=["/nonexistent/model-cli", "--flag"]))
    assert isinstance(error, FatalProviderError)
    assert "/nonexistent/model-cli" in str(error)


def test_stdout_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(command_module, "MAX_STDOUT_BYTES", 1000)
    error = failure(provider(command=[PY, "-c", "import sys; sys.stdout.write('x' * 200_000)"]))
    assert error.kind == "too_large"
    assert error.retryable is False


def test_a_command_that_ignores_a_large_stdin_still_answers() -> None:
    done = complete(provider(command=["echo", "fine"]), request(prompt="y" * 2_000_000))
    assert done.text == "fine"


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    done = complete(provider(command=[PY, "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff')"]))
    assert done.text == "ok \ufffd"


def test_samples_run_concurrently_and_independently() -> None:
    # Every sample waits at a barrier that opens only once all six are there: they cannot run one by one.
    script = (
        "import os, socket, sys; barrier = socket.create_connection(('127.0.0.1', int(sys.argv[1]))); "
        "barrier.sendall(b'x'); print('sample', os.environ['STABILITYGATE_SAMPLE_INDEX'], barrier.makefile().read())"
    )

    async def many() -> list[Completion]:
        waiting: list[asyncio.StreamWriter] = []

        async def arrive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readexactly(1)
            waiting.append(writer)
            if len(waiting) == 6:
                for each in waiting:
                    each.write(b"through")
                    each.close()

        barrier = await asyncio.start_server(arrive, "127.0.0.1", 0)
        port = barrier.sockets[0].getsockname()[1]
        p = provider(timeout_s=HELD_S, command=[PY, "-c", script, str(port)])
        async with barrier:
            return await asyncio.gather(*(p.complete(request(i)) for i in range(6)))

    done = asyncio.run(many())
    assert [c.text for c in done] == [f"sample {i} through" for i in range(6)]


@pytest.mark.parametrize("command", [[], "", "   "])
def test_an_empty_command_is_bad_input(command: Any) -> None:
    with pytest.raises(BadInput, match=r"^provider\.command: expected a program"):
        CommandProvider.create({"type": "command", "command": command}, environ={})


def test_an_unsplittable_string_is_bad_input() -> None:
    with pytest.raises(BadInput, match="cannot split"):
        provider(command="echo 'unterminated")


def test_a_grandchild_that_left_the_group_cannot_hang_the_sample(tmp_path: Path) -> None:
    fifo = tmp_path / "ready"
    os.mkfifo(fifo)
    # The grandchild starts its own session (out of reach of the group kill) and keeps stdout open. The
    # command names it on the FIFO and holds the FIFO open until it dies itself.
    script = (
        "import subprocess, sys, time\n"
        f"grandchild = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({HELD_S})'], "
        "start_new_session=True)\n"
        f"ready = open({str(fifo)!r}, 'w')\n"
        "print(grandchild.pid, file=ready, flush=True)\n"
        f"time.sleep({HELD_S})\n"
    )
    asked: list[float] = []
    opened: list[TextIO] = []
    named: list[int] = []

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        if len(asked) == 1:  # the timeout is up once the grandchild is running
            opened.append(await asyncio.to_thread(open, fifo))
            named.append(int(await asyncio.to_thread(opened[0].readline)))
        else:  # the grace for reaping runs out once the killed command is dead: only the grandchild is left
            await asyncio.to_thread(opened[0].read)

    try:
        error = failure(provider(timeout_s=0.5, sleep=sleep, command=[PY, "-c", script]))
        (grandchild,) = named
        assert _running(grandchild), "the sample waited for the grandchild instead of giving up its pipes"
    finally:
        for pid in named:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for handle in opened:
            handle.close()
    assert error.kind == "timeout"
    assert asked == [0.5, REAP_WAIT_S]


def _running(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


SHOW = "import os; print(sorted(k for k in os.environ if k.startswith(('INPUT_', 'ACTIONS_', 'MY_'))))"


def test_the_runners_variables_are_withheld_unless_passed_on_purpose() -> None:
    """Issue 25, item 1: `INPUT_*` (the job's token) and `ACTIONS_*` are not inherited by default."""
    env = {
        **os.environ,
        "INPUT_GITHUB-TOKEN": "ghs_token_0123456789",
        "INPUT_SUITE": "s.yml",
        "ACTIONS_RUNTIME_TOKEN": "runtime-0123456789",
        "MY_SETTING": "kept",
    }
    assert complete(provider(environ=env, command=[PY, "-c", SHOW])).text == "['MY_SETTING']"
    passed = provider(environ=env, command=[PY, "-c", SHOW], pass_env=["INPUT_GITHUB-TOKEN", "actions_runtime_token"])
    assert complete(passed).text == "['ACTIONS_RUNTIME_TOKEN', 'INPUT_GITHUB-TOKEN', 'MY_SETTING']"


def test_a_token_the_child_found_elsewhere_is_redacted_before_stderr_is_cut() -> None:
    env = {**os.environ, "INPUT_GITHUB-TOKEN": "ghs_" + "t" * 40}
    script = "import sys; sys.exit('x' * 490 + ' ' + 'ghs_' + 't' * 40)"
    error = failure(provider(environ=env, command=[PY, "-c", script]))
    assert "ghs_" not in str(error) and "***" in str(error)
