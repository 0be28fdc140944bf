from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from stabilitygate.errors import BadInput, CannotMeasure
from stabilitygate.measure.embedding_worker import THREAD_NAME, BackgroundLoad, Prefetch, Worker, resurfaced


def held(worker: Worker) -> threading.Event:
    """Occupy the worker until the returned event is set, so jobs queue up behind it."""
    gate = threading.Event()

    def wait() -> None:
        assert gate.wait(timeout=60)

    worker.submit(wait)
    return gate


def test_jobs_run_in_order_on_the_named_daemon_thread() -> None:
    worker = Worker()
    gate = held(worker)
    ran: list[tuple[int, str, bool]] = []
    done = threading.Event()

    def record(i: int) -> Callable[[], None]:
        return lambda: ran.append((i, threading.current_thread().name, threading.current_thread().daemon))

    for i in range(3):
        worker.submit(record(i))
    worker.submit(done.set)
    gate.set()
    assert done.wait(timeout=60)
    assert ran == [(i, THREAD_NAME, True) for i in range(3)]


def test_errors_resurface_as_gate_errors_with_the_same_words() -> None:
    bad = resurfaced(BadInput("embedding model 'x' is not a local directory"))
    assert type(bad) is BadInput and str(bad) == "embedding model 'x' is not a local directory"
    broken = resurfaced(CannotMeasure("the ONNX export is corrupt"))
    assert type(broken) is CannotMeasure and str(broken) == "the ONNX export is corrupt"
    other = resurfaced(OSError("no space left"))
    assert type(other) is CannotMeasure
    assert str(other) == "the embedding model could not be loaded: no space left"


def test_the_load_runs_once_on_the_worker() -> None:
    loads: list[str] = []

    def load() -> str:
        loads.append(threading.current_thread().name)
        return "model"

    worker = Worker()
    loading: BackgroundLoad[str] = BackgroundLoad(worker)
    started_before = loading.started
    loading.start(load)
    assert (started_before, loading.started) == (False, True)
    loading.start(load)  # a second start queues nothing more
    done = threading.Event()
    worker.submit(done.set)
    assert done.wait(timeout=60)  # the load ran on the worker before anyone asked for it
    assert loading.result(load) == "model"
    assert loading.result(load) == "model"
    assert loads == [THREAD_NAME]


def test_a_failed_load_is_raised_to_every_caller_chained_to_its_cause() -> None:
    def load() -> str:
        raise ValueError("weights truncated")

    loading: BackgroundLoad[str] = BackgroundLoad(Worker())
    for _ in range(2):
        with pytest.raises(
            CannotMeasure, match=r"^the embedding model could not be loaded: weights truncated$"
        ) as caught:
            loading.result(load)
        assert isinstance(caught.value.__cause__, ValueError)


def test_texts_handed_over_while_the_worker_is_busy_go_as_one_batch() -> None:
    worker = Worker()
    prefetch = Prefetch(worker)
    batches: list[list[str]] = []
    gate = held(worker)
    prefetch.add(["a"], batches.append)
    prefetch.add([], batches.append)  # nothing to do: no job
    prefetch.add(["b", "c"], batches.append)
    done = threading.Event()
    worker.submit(done.set)
    gate.set()
    assert done.wait(timeout=60)
    assert batches == [["a", "b", "c"]]


def test_an_error_of_a_prefetch_is_left_to_the_embed_that_needs_the_vectors() -> None:
    worker = Worker()
    prefetch = Prefetch(worker)
    seen: list[list[str]] = []

    def failing_embed(texts: list[str]) -> None:
        seen.append(texts)
        raise CannotMeasure("the model is broken")

    prefetch.add(["a"], failing_embed)
    done = threading.Event()
    worker.submit(done.set)  # the worker survives the error and runs what comes next
    assert done.wait(timeout=60)
    prefetch.add(["b"], failing_embed)
    again = threading.Event()
    worker.submit(again.set)
    assert again.wait(timeout=60)
    assert seen == [["a"], ["b"]]


class HeldLoad:
    """A load that says when it began (and in which thread) and finishes only when released."""

    def __init__(self) -> None:
        self.began = threading.Event()
        self.release = threading.Event()
        self.threads: list[str] = []

    def __call__(self) -> str:
        self.threads.append(threading.current_thread().name)
        self.began.set()
        assert self.release.wait(timeout=60)
        return "model"


def result_in_thread(loading: BackgroundLoad[str], load: Callable[[], str]) -> tuple[threading.Thread, list[str]]:
    got: list[str] = []
    thread = threading.Thread(target=lambda: got.append(loading.result(load)))
    thread.start()
    return thread, got


@pytest.mark.parametrize("queued_behind", [False, True], ids=["never-started", "start-queued-behind-the-job"])
def test_a_job_that_needs_the_load_first_loads_it_in_place(queued_behind: bool) -> None:
    # The hang of a warm cache: a prefetch job needs the model before anything started loading it
    # (or with the load queued behind that very job). The job must load it itself, not wait.
    worker = Worker()
    loading: BackgroundLoad[str] = BackgroundLoad(worker)
    load = HeldLoad()
    needed: list[str] = []
    worker.submit(lambda: needed.append(loading.result(load)))
    assert load.began.wait(timeout=60)  # the job is loading, on the worker
    if queued_behind:
        loading.start(load)  # queued behind the job that is loading: must not load a second time
    waiter, got = result_in_thread(loading, load)  # the measuring thread asks meanwhile
    load.release.set()
    waiter.join(timeout=60)
    done = threading.Event()
    worker.submit(done.set)
    assert done.wait(timeout=60)  # the worker is free again
    assert (needed, got, load.threads) == (["model"], ["model"], [THREAD_NAME])


def test_a_load_started_first_is_awaited_by_the_jobs_behind_it() -> None:
    worker = Worker()
    loading: BackgroundLoad[str] = BackgroundLoad(worker)
    load = HeldLoad()
    loading.start(load)
    assert load.began.wait(timeout=60)
    needed: list[str] = []
    worker.submit(lambda: needed.append(loading.result(load)))  # a prefetch queued behind the load
    waiter, got = result_in_thread(loading, load)
    load.release.set()
    waiter.join(timeout=60)
    done = threading.Event()
    worker.submit(done.set)
    assert done.wait(timeout=60)
    assert (needed, got, load.threads) == (["model"], ["model"], [THREAD_NAME])


def test_a_caller_loads_in_place_when_the_queued_load_has_not_begun() -> None:
    worker = Worker()
    gate = held(worker)  # the worker is busy: the queued load cannot begin
    loading: BackgroundLoad[str] = BackgroundLoad(worker)
    loads: list[str] = []

    def load() -> str:
        loads.append(threading.current_thread().name)
        return "model"

    loading.start(load)
    assert loading.result(load) == "model"  # not waiting for the busy worker
    gate.set()
    done = threading.Event()
    worker.submit(done.set)
    assert done.wait(timeout=60)
    assert loads == [threading.current_thread().name]  # once, here; the queued job found it claimed


def test_waiting_for_a_load_has_a_bound_past_which_the_run_cannot_measure() -> None:
    worker = Worker()
    loading: BackgroundLoad[str] = BackgroundLoad(worker, wait_s=0.05)
    load = HeldLoad()
    loading.start(load)
    assert load.began.wait(timeout=60)
    with pytest.raises(CannotMeasure, match=r"^waited 0.05 s for the embedding model to load"):
        loading.result(load)
    load.release.set()
