"""The threads a run's chunk hooks share: independent pieces of one chunk's reduction (a
strategy's milestones, a strategy's bands, the chunk's rows of metrics.parquet) side by side.

The pieces are compiled loops (Numba, nogil), NumPy sorts and Arrow's Parquet writer, all of
which release the GIL, so threads use every core the run has (as many as Numba's). Each
piece touches only its own state; run_tasks returns when all are done and raises the first
error among them.
"""
from __future__ import annotations

import functools
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable

import numba

from .stops import signals_held

# A column of at least this many values (the scenarios' metrics, the drivers' inputs, the
# pairs of a paired test) goes through the compiled loops of results (results.selection);
# smaller ones through NumPy, which costs less than loading the loops from Numba's cache
# (~0.5 s) or, on a first run, compiling them (~8 s): the default run (20,000 scenarios)
# never waits for them.
COMPILED_FROM = 32_768
# The same for a chunk's node times (scenarios x strategies x nodes) in the chunk hooks
# (results.milestone_chunks, results.band_chunks): the reference's default run (20,000 x 5
# x 82, one chunk) stays in NumPy, and a plan of thousands of nodes, whose chunks hold few
# scenarios, never goes through NumPy's per-node loops.
COMPILED_FROM_NODE_TIMES = 32_768 * 5 * 82


@functools.lru_cache(maxsize=1)
def pool() -> ThreadPoolExecutor:
    """One worker per thread Numba uses, shared by every hook of the process."""
    return ThreadPoolExecutor(max_workers=max(1, numba.get_num_threads()),
                              thread_name_prefix="mcrisk-chunk")


def submit(futures: list, task: Callable, *args) -> Future:
    """pool().submit(task, *args), its future appended to `futures`, for the caller to
    finish() in a `finally`. A stop is held back until both are done: one landing inside
    submit, while it starts a worker thread, leaves a thread the pool never registered (the
    process then hangs at exit, after the stop's message), and one landing before the
    future is kept leaves a task that runs on, unwaited, while the run unwinds."""
    with signals_held():
        futures.append(pool().submit(task, *args))
    return futures[-1]


def run_tasks(tasks: Iterable[Callable[[], None]]) -> None:
    """Run every task, side by side; when one fails, wait for the others, then raise the
    first failure (in submission order)."""
    futures: list[Future] = []
    try:
        for task in tasks:
            submit(futures, task)
    finally:
        finish(futures)                      # also behind a stop: none runs on unwaited
    for future in futures:
        if future.exception() is not None:
            raise future.exception()


def finish(futures) -> None:
    """Wait until every future is done, also when a signal's exception (Ctrl-C, the CLI's
    SIGTERM) interrupts the wait: it is raised once they are, so that no task still writes
    a file or a collector while the run unwinds and removes them."""
    interrupted = None
    while True:
        try:
            wait(futures)
            break
        except BaseException as error:      # noqa: B036 -- re-raised below
            interrupted = interrupted or error
    if interrupted is not None:
        raise interrupted
