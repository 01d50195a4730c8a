"""The report's figures drawn in a second process, while this one simulates and writes.

A default run spends most of its report importing matplotlib and drawing figures, one core at
a time, while the machine's other core idles through the summaries and the files. A
FigurePool started before the simulation runs a worker process (`python -m
mcrisk.report.figures.worker`, a fresh interpreter: never a fork of a process whose Numba
threads exist) that imports matplotlib while the kernel runs; each figure is submitted as soon
as its data exist, as a job (a figure function of figures or cost_figures and its arguments:
figure_data's plain stand-ins, a few kB each at any number of scenarios), and drawn there.

Nothing is lost if the worker fails: a worker that does not start, dies, stalls or fails a
figure leaves that figure to this process, which draws it as it always did (an error is then
raised here, as without a worker). The worker's PNG bytes are those this process would draw:
the same code, inputs and matplotlib.

Protocol, over the worker's stdin and stdout (length-prefixed pickles): the worker sends
("ready",) once imported, then one message per job it was given, ("done", name, png) or
("failed", name, reason); after each message it reads its next job, (name, module, function,
args), or None: stop. A thread here answers it from the pool's queue.

The pool uses a worker only where one helps (worker_wanted): two or more cores, not all of
them busy already (the load average), and matplotlib not yet imported in this process (a
second report in a long-lived process draws in-process as before). MCRISK_FIGURE_WORKER=0
turns it off, =force ignores the load (benchmarks/end_to_end.py, to time the worker on a
machine others load too).
"""
from __future__ import annotations

import collections
import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

MODULES = ("charts", "costs")          # where a job's figure function may live
STALL_SECONDS = 120.0      # a worker silent this long while its figures are awaited: given up
_HEADER = struct.Struct("<Q")


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
    return cores >= 2 and not busy and "matplotlib" not in sys.modules


def draw(module: str, function: str, args: tuple) -> bytes:
    """Run figure function `module`.`function`(*args): one of MODULES' public functions."""
    if module not in MODULES or function.startswith("_"):
        raise ValueError(f"not a figure function: {module}.{function}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)(*args)


def _send(stream, message) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


def _receive(stream):
    """The next message; EOFError when the other side has closed its end."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError
    body = stream.read(_HEADER.unpack(header)[0])
    if len(body) < _HEADER.unpack(header)[0]:
        raise EOFError
    return pickle.loads(body)


class FigurePool:
    """Figures by name, drawn by a worker process (worker=True) or here.

    submit() queues a figure; pngs() returns every submitted figure's PNG bytes, waiting for
    the worker's and drawing here whatever it did not draw. Use as a context manager: the
    worker is stopped on exit, also on error. `steal`: whether this process also draws
    queued figures (from the queue's end) once it waits for them; by default only when
    matplotlib is imported here anyway (_stealing). `by_worker`: the figures the worker
    drew."""

    def __init__(self, worker: bool = False, steal: bool | None = None):
        self._lock = threading.Condition()
        self._queue: collections.deque = collections.deque()   # jobs nobody has taken
        self._jobs: dict[str, tuple] = {}                       # every job, by name
        self._given: set[str] = set()                            # taken by the worker
        self._done: dict[str, bytes] = {}
        self._closed = False                  # no more submissions: the worker may stop
        self._dead = not worker               # no worker (any more): draw here
        self._heard = time.monotonic()
        self._steal = steal
        self._process = None
        self.by_worker: set[str] = set()
        if worker:
            self._start()

    @property
    def uses_worker(self) -> bool:
        return self._process is not None

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parents[2])      # the folder holding mcrisk/
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root, *filter(None, [os.environ.get("PYTHONPATH")])]))
        try:
            self._process = subprocess.Popen(
                self._command(), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError:
            self._dead = True
            return
        threading.Thread(target=self._serve, name="mcrisk-figure-worker", daemon=True).start()

    def _command(self) -> list[str]:
        return [sys.executable, "-m", __name__]

    def submit(self, name: str, module: str, function: str, *args) -> None:
        """Queue figure `name`: module.function(*args) (see draw)."""
        with self._lock:
            if name in self._jobs:
                raise ValueError(f"figure {name!r} submitted twice")
            self._jobs[name] = (name, module, function, args)
            self._queue.append(self._jobs[name])
            self._lock.notify_all()

    def __contains__(self, name: str) -> bool:
        return name in self._jobs

    def pngs(self) -> dict[str, bytes]:
        """{name: PNG bytes} of every submitted figure, in submission order."""
        with self._lock:
            self._closed = True
            self._heard = time.monotonic()      # the stall clock runs while this one waits
            self._lock.notify_all()
        while True:
            job = self._next_here()
            if job is None:
                break
            self._draw_here(job)
        return {name: self._done[name] for name in self._jobs}

    def _next_here(self):
        """A job for this process to draw, None when every figure is drawn: the queue's
        last (the worker takes from the front) when this process has matplotlib anyway or
        there is no worker; a job the worker took but failed or never returned."""
        with self._lock:
            while True:
                if self._stalled():
                    self._give_up()
                if self._queue and (self._dead or self._stealing()):
                    return self._queue.pop()
                if self._dead:
                    lost = [self._jobs[n] for n in self._given if n not in self._done]
                    if lost:
                        self._given.discard(lost[0][0])
                        return lost[0]
                if len(self._done) == len(self._jobs):
                    return None
                self._lock.wait(timeout=1.0)

    def _stealing(self) -> bool:
        """(Under the lock.) Whether this process draws queued figures too: as told, else
        only when it has matplotlib anyway. Importing it here to share the drawing costs a
        second import (~0.8 s of CPU), measured to cost more than it saved."""
        if self._steal is not None:
            return self._steal
        return "matplotlib" in sys.modules

    def _stalled(self) -> bool:
        return not self._dead and time.monotonic() - self._heard > STALL_SECONDS

    def _draw_here(self, job) -> None:
        name, module, function, args = job
        png = draw(module, function, args)
        with self._lock:
            self._done[name] = png

    def _serve(self) -> None:
        """The worker's side of the protocol: record what it sends, give it the next job."""
        process = self._process
        try:
            while True:
                message = _receive(process.stdout)
                with self._lock:
                    self._heard = time.monotonic()
                    if message[0] == "done" and message[1] not in self._done:
                        self._done[message[1]] = message[2]
                        self.by_worker.add(message[1])
                    elif message[0] == "failed":
                        self._given.discard(message[1])
                        self._queue.append(self._jobs[message[1]])   # drawn here instead
                        self._dead = True      # a worker that fails once draws no more
                    self._lock.notify_all()
                    job = self._next_for_worker()
                _send(process.stdin, job)
                if job is None:
                    return
        except (EOFError, OSError, pickle.PickleError, ValueError, IndexError, KeyError,
                TypeError):
            pass
        finally:
            with self._lock:
                self._dead = True
                self._lock.notify_all()

    def _next_for_worker(self):
        """(Under the lock.) The worker's next job, waiting for one to be submitted; None when
        the pool is closed with nothing queued, or the worker is given up on."""
        while not self._dead:
            if self._queue:
                job = self._queue.popleft()
                self._given.add(job[0])
                return job
            if self._closed:
                return None
            self._lock.wait(timeout=1.0)
        return None

    def _give_up(self) -> None:
        """(Under the lock.) Stop waiting for the worker: what it holds is drawn here."""
        self._dead = True
        if self._process is not None:
            self._process.kill()

    def close(self) -> None:
        """Stop the worker (at once: whatever it is drawing is not needed any more)."""
        with self._lock:
            self._closed = True
            self._dead = True
            self._lock.notify_all()
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()               # the worker reads EOF and stops
        except OSError:
            pass
        try:
            process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

    def __enter__(self) -> "FigurePool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def main() -> int:
    """The worker: import matplotlib (with the figure modules), then draw jobs until told to
    stop. Its stdout carries the protocol only (anything printed goes to stderr)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is the parent's to handle
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    source = sys.stdin.buffer
    for module in MODULES:
        importlib.import_module(f"{__package__}.{module}")
    _send(out, ("ready",))
    while True:
        try:
            job = _receive(source)
        except EOFError:
            return 0
        if job is None:
            return 0
        name, module, function, args = job
        try:
            _send(out, ("done", name, draw(module, function, args)))
        except Exception as error:               # the parent draws it again, and raises
            _send(out, ("failed", name, repr(error)))


if __name__ == "__main__":
    sys.exit(main())
