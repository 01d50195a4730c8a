"""The threads a run's chunk hooks share: independent pieces of one chunk's reduction (a
strategy's milestones, a strategy's bands, the chunk's rows of metrics.parquet) side by side.

The pieces are compiled loops (Numba, nogil), NumPy sorts and Arrow's Parquet writer, all of
which release the GIL, so threads use every core the run has (as many as Numba's). Each
piece touches only its own state; run_tasks returns when all are done and raises the first
error among them.
"""
from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable


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
    """One worker per thread Numba uses (the CPUs where Numba cannot be imported), shared
    by every hook of the process. Numba is imported here, on first use: `mcrisk validate`
    and the CLI's start load none of it."""
    try:
        import numba
        threads = numba.get_num_threads()
    except ImportError:
        threads = os.cpu_count() or 1
    return ThreadPoolExecutor(max_workers=max(1, threads),
                              thread_name_prefix="mcrisk-chunk")


def submit(futures: list, task: Callable, *args, executor=None) -> Future:
    """pool().submit(task, *args) (or `executor`'s), its future appended to `futures`, for
    the caller to finish() in a `finally`. A stop is held back until both are done: one landing inside
    submit, while it starts a worker thread, leaves a thread the pool never registered (the
    process then hangs at exit, after the stop's message), and one landing before the
    future is kept leaves a task that runs on, unwaited, while the run unwinds."""
    with signals_held():
        futures.append((executor or pool()).submit(task, *args))
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


class Background:
    """Tasks run one after another on a thread of their own, behind the caller: `put` hands
    one over and returns at once unless `depth` are already waiting (then it waits for the
    oldest), so the caller goes on while they run, and at most `depth` tasks' inputs are
    held. `finish()` waits for every task and raises the first failure (in order); so does
    the next `put` once one has failed. `cancel()` drops those not started and waits for the
    one running: after either, nothing runs on.

    Performance: what nobody waits for till the end (metrics.parquet's rows) runs while the
    chunk loop simulates and reduces the next chunks, and while the run summarizes after it,
    when one of the two cores would otherwise idle on the summaries' single thread.
    """

    def __init__(self, depth: int = 2, name: str = "mcrisk-background"):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._room = threading.BoundedSemaphore(depth)
        self._futures: list[Future] = []

    def put(self, task: Callable, *args) -> None:
        self._raise_failure()
        self._room.acquire()
        try:
            future = submit(self._futures, task, *args, executor=self._pool)
        except BaseException:
            self._room.release()
            raise
        future.add_done_callback(lambda _: self._room.release())

    def finish(self) -> None:
        try:
            finish(self._futures)
        finally:
            self._pool.shutdown(wait=False)
        self._raise_failure()

    def cancel(self) -> None:
        for future in self._futures:
            future.cancel()
        try:
            finish(self._futures)
        finally:
            self._pool.shutdown(wait=False)

    def _raise_failure(self) -> None:
        for future in self._futures:
            if future.done() and not future.cancelled() and future.exception() is not None:
                raise future.exception()
        self._futures = [f for f in self._futures if not f.done()]
