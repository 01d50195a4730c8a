"""The report's figures drawn in a second process, while this one simulates and writes.

A default run spends most of its report importing matplotlib and drawing figures, one core at
a time, while the machine's other core idles through the summaries and the files. A
FigurePool started before the simulation runs one worker process (the standard library's
ProcessPoolExecutor, started with `spawn`: a fresh interpreter, never a fork of a process
whose Numba threads exist) that imports matplotlib while the kernel runs; each figure is
submitted as soon as its data exist, as a job (a public figure function of charts or costs,
named, and its arguments: data's plain stand-ins, a few kB each at any number of scenarios),
and drawn there.

Nothing is lost if the worker fails: a worker that does not start, dies, stalls or fails a
figure leaves that figure, and every figure it had not drawn yet, to this process, which draws
them as it always did (an error is then raised here, as without a worker). The worker's PNG
bytes are those this process would draw: the same code, inputs and matplotlib.

The pool uses a worker only where one helps (worker_wanted): two or more cores, not all of
them busy already (the load average), and matplotlib not yet imported in this process (a
second report in a long-lived process draws in-process as before). And only where starting
it is safe: a `spawn` process imports the parent's main script again, which runs a script
that calls mcrisk at its top level, without `if __name__ == "__main__":`, a second time. So
the worker is used under the `mcrisk` command, `python -m mcrisk`, `python -c` and
interactive sessions, not under another script unless asked. MCRISK_FIGURE_WORKER=0 turns it
off, =force uses it anyway (to time the worker, with benchmarks/end_to_end.py say, on a
machine others load too; a script that sets it must guard its top level).
"""
from __future__ import annotations

import concurrent.futures as futures
import contextlib
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time

from ...core.stops import signals_held

MODULES = ("charts", "costs")          # where a job's figure function may live
STALL_SECONDS = 120.0      # a worker silent this long while its figures are awaited: given up


def worker_wanted() -> bool:
    """Whether a worker process would shorten the report (see the module docstring): a
    second process costs ~0.3 s more CPU (an interpreter, numpy) and gains only where a
    core would otherwise idle, so not on a machine already busy (a load average within half
    a core of the cores this process may use)."""
    setting = os.environ.get("MCRISK_FIGURE_WORKER", "")
    if setting == "0" or not sys.executable:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    try:
        busy = os.getloadavg()[0] > cores - 0.5 and setting != "force"
    except OSError:
        busy = False
    safe = setting == "force" or _main_runs_nothing_again()
    return cores >= 2 and not busy and safe and "matplotlib" not in sys.modules


def _main_runs_nothing_again() -> bool:
    """Whether the worker's import of this process's main module runs nothing: no main file
    (`python -c`, an interactive session), a package's __main__ (`python -m mcrisk`: spawn
    skips those) or the `mcrisk` command's script (its main is mcrisk.__main__'s, or the
    CLI's in a script installed before that, under a guard)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(main, "__file__", None) is None or (spec is not None and (
            spec.name == "__main__" or spec.name.endswith(".__main__"))):
        return True
    return getattr(getattr(main, "main", None), "__module__", None) in ("mcrisk.__main__",
                                                                         "mcrisk.cli")


def draw(module: str, function: str, args: tuple) -> bytes:
    """Run figure function `module`.`function`(*args): one of MODULES' public functions.
    A job names its function, so that this process never imports matplotlib to send one."""
    if module not in MODULES or function.startswith("_"):
        raise ValueError(f"not a figure function: {module}.{function}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)(*args)


def start_worker() -> None:
    """The worker's start: Ctrl-C is the parent's to handle; import matplotlib with the
    figure modules now, while the parent simulates."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in MODULES:
        importlib.import_module(f"{__package__}.{module}")


def _ready() -> bool:
    return True


class FigurePool:
    """Figures by name, drawn by a worker process (worker=True) or here.

    submit() queues a figure; pngs() returns every submitted figure's PNG bytes, waiting for
    the worker's and drawing here whatever it did not draw. Use as a context manager: the
    worker is stopped on exit, also on error. `steal`: whether this process also draws
    figures the worker has not started (from the queue's end) once it waits for them; by
    default only when matplotlib is imported here anyway (_stealing). `by_worker`: the
    figures the worker drew."""

    def __init__(self, worker: bool = False, steal: bool | None = None):
        self._jobs: dict[str, tuple] = {}              # every job, by name, in order
        self._futures: dict[str, futures.Future] = {}  # those given to the worker
        self._done: dict[str, bytes] = {}
        self._steal = steal
        self._executor: futures.ProcessPoolExecutor | None = None
        self.by_worker: set[str] = set()
        if worker:
            self._start()

    @property
    def uses_worker(self) -> bool:
        return self._executor is not None

    def _start(self) -> None:
        """Start the worker now (an executor starts its processes on the first job: the
        warm-up job makes it import matplotlib during the simulation)."""
        context = multiprocessing.get_context("spawn")
        try:
            with _signals_held():
                self._executor = futures.ProcessPoolExecutor(
                    max_workers=1, mp_context=context, initializer=start_worker)
                self._executor.submit(_ready)
        except (OSError, RuntimeError):
            self._executor = None

    def submit(self, name: str, module: str, function: str, *args) -> None:
        """Queue figure `name`: module.function(*args) (see draw)."""
        if name in self._jobs:
            raise ValueError(f"figure {name!r} submitted twice")
        self._jobs[name] = (module, function, args)
        if self._executor is not None:
            try:
                self._futures[name] = self._executor.submit(draw, module, function, args)
            except (RuntimeError, futures.BrokenExecutor):    # the worker is gone
                self._give_up()

    def __contains__(self, name: str) -> bool:
        return name in self._jobs

    def pngs(self) -> dict[str, bytes]:
        """{name: PNG bytes} of every submitted figure, in submission order."""
        heard = time.monotonic()                 # the stall clock runs while this one waits
        while True:
            if self._collect():
                heard = time.monotonic()
            left = [name for name in self._jobs if name not in self._done]
            if not left:
                return {name: self._done[name] for name in self._jobs}
            here = self._next_here(left)
            if here is not None:
                self._done[here] = draw(*self._jobs[here])
                continue
            waiting = [self._futures[name] for name in left]
            remaining = STALL_SECONDS - (time.monotonic() - heard)
            finished, _ = futures.wait(waiting, timeout=max(0.0, remaining),
                                       return_when=futures.FIRST_COMPLETED)
            if not finished:                     # silent too long: drawn here instead
                self._give_up()

    def _collect(self) -> bool:
        """Take what the worker finished into _done; whether it finished anything. A job
        it failed gives up on the worker (a worker that fails once draws no more)."""
        heard = False
        for name, future in list(self._futures.items()):
            if name in self._done or not future.done() or future.cancelled():
                continue
            heard = True
            if future.exception() is not None:
                self._give_up()
                break
            self._done[name] = future.result()
            self.by_worker.add(name)
        return heard

    def _next_here(self, left: list[str]) -> str | None:
        """A figure for this process to draw now, or None to wait for the worker: one the
        worker does not have (never given, or taken back from it), else, when stealing, the
        last one the worker has not started."""
        for name in left:
            future = self._futures.get(name)
            if future is None or future.cancelled():
                return name
        if self._stealing():
            for name in reversed(left):
                if self._futures[name].cancel():
                    return name
        return None

    def _stealing(self) -> bool:
        """Whether this process draws queued figures too: as told, else only when it has
        matplotlib anyway. Importing it here to share the drawing costs a second import
        (~0.8 s of CPU), measured to cost more than it saved."""
        if self._steal is not None:
            return self._steal
        return "matplotlib" in sys.modules

    def _give_up(self) -> None:
        """Stop using the worker: every figure it has not delivered is drawn here."""
        self._futures = {name: future for name, future in self._futures.items()
                         if name in self._done}
        self._stop(at_once=True)

    def _stop(self, at_once: bool) -> None:
        """Shut the worker down; `at_once`: kill it first (whatever it is drawing is not
        needed any more), else it ends once idle."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        with signals_held():           # a stop is delivered once the worker is gone
            if at_once:
                _kill_workers(executor)
            executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Stop the worker: at once when it still holds a figure (the run stopped early),
        else as soon as it is idle."""
        self._stop(at_once=any(not future.done() for future in self._futures.values()))

    def __enter__(self) -> "FigurePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def _signals_held():
    """Ctrl-C and SIGTERM held back (not lost) in this thread while the worker starts: the
    worker inherits the blocked signals, so a Ctrl-C at the terminal, which reaches the
    whole process group, stops only this process (which then stops the worker) and never
    prints the worker's traceback. A thread other than the main one has nothing to hold."""
    if threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _kill_workers(executor: futures.ProcessPoolExecutor) -> None:
    """Kill the executor's processes: kill_workers() where Python has it (3.14), else the
    processes it keeps (a private attribute, present since 3.2); nothing once they are
    gone."""
    kill = getattr(executor, "kill_workers", None)
    if kill is not None:
        with contextlib.suppress(Exception):
            kill()
        return
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            if process.is_alive():
                process.kill()
