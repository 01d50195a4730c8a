"""How a stop (Ctrl-C's SIGINT; SIGTERM from systemd, a scheduler or `kill`) ends mcrisk: it
unwinds the program like an exception, so every cleanup runs (temporary files, the staging
folder, nightly's .partial folder, the locks), wherever it lands.

    stops_unwind   inside it, SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated
                   (a KeyboardInterrupt), once: a second stop while the first unwinds is
                   ignored, so that the cleanup completes (SIGKILL still ends the process)
    signals_held   stops held back inside it and delivered right after: around a step that
                   must not be cut in two (a rename and its bookkeeping, a cleanup, handing a
                   task to a thread pool: a stop inside ThreadPoolExecutor.submit can leave a
                   thread the pool never registered, on which the process then hangs at exit)

Python runs a signal's handler in the main thread between two bytecodes, and an exception
raised in a finalizer (`__del__`, a weakref callback, a context's garbage collection) is not
raised but printed ("Exception ignored in ...") while the program carries on. A stop that
lands in one would be lost: the run would go on and exit 0. stops_unwind notices (through
sys.unraisablehook), prints nothing, and raises the stop again moments later, outside the
finalizer; a stop lost any other way (code that catches every exception and drops it) is
raised by Stops.settle when the work is done. The CLI turns a stop into its one-line
message (stop_message) and exit status 128 + the signal (stop_status).

Handlers can only be set in the main thread; elsewhere both blocks do nothing.
"""
from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
from typing import Iterator

EXIT_SIGNAL_BASE = 128          # stopped by signal N: exit 128 + N (SIGINT 130, SIGTERM 143)
STOPS = (signal.SIGINT, signal.SIGTERM)
REDELIVERY_S = 0.01             # a swallowed stop is raised again this long after, and again


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler wherever the program is, so that a SIGTERM unwinds
    exactly like Ctrl-C: every `finally` and `except BaseException` cleanup runs."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum


def stop_signal(stop: BaseException) -> int:
    """The signal a stop stands for: Terminated's, else SIGINT (a KeyboardInterrupt)."""
    return getattr(stop, "signum", signal.SIGINT)


def stop_status(signum: int) -> int:
    return EXIT_SIGNAL_BASE + signum


def stop_message(signum: int) -> str:
    """The line the CLI prints when a stop ended a command."""
    name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C (SIGINT)"
    return (f"mcrisk: stopped by {name}; nothing is half-written: each output folder holds "
            "the previous run's files or, if this run had finished, all of its own")


def _exception(signum: int) -> KeyboardInterrupt:
    return Terminated(signum) if signum == signal.SIGTERM else KeyboardInterrupt()


class Stops:
    """What one stops_unwind block knows: the first stop (`signum`), and the exception raised
    for it while it unwinds (`raised`; None again when a finalizer swallowed it)."""

    def __init__(self):
        self.signum: int | None = None
        self.raised: BaseException | None = None
        self.ended = False
        self._redelivering = False

    def handler(self, signum: int, _frame) -> None:
        if self.raised is not None:       # the first stop unwinds: let its cleanup complete
            return
        self.signum = self.signum or signum
        self.raised = _exception(self.signum)
        raise self.raised

    def caught(self, stop: BaseException) -> int:
        """The signal of `stop`, which the caller caught and now reports; later stops are
        ignored while it does."""
        if self.signum is None:           # raised by code, not by a signal: Ctrl-C's meaning
            self.signum = stop_signal(stop)
        self.raised = stop
        return self.signum

    def settle(self) -> None:
        """Raise the stop that arrived but was lost on the way (module docstring), if any:
        for the caller to catch and report as any other."""
        if self.signum is not None:
            self.raised = _exception(self.signum)
            raise self.raised

    def swallowed(self, unraisable) -> bool:
        """Whether `unraisable` is this block's stop, swallowed by a finalizer: then it is
        raised again, by a thread that interrupts the main thread until it is."""
        if self.raised is None or unraisable.exc_value is not self.raised:
            return False
        self.raised = None
        if not self._redelivering:
            self._redelivering = True
            threading.Thread(target=self._redeliver, name="mcrisk-stop", daemon=True).start()
        return True

    def _redeliver(self) -> None:
        """interrupt_main trips the handler as the signal would, without sending one: no
        signal is left in flight for whatever handler follows this block's."""
        while not self.ended:
            time.sleep(REDELIVERY_S)      # the finalizer returns meanwhile
            if self.raised is None and not self.ended:
                _thread.interrupt_main(self.signum)


def heeded() -> tuple[int, ...]:
    """The stops this process heeds: those not ignored when it started (a shell starts a
    background job of a script with SIGINT ignored, so that Ctrl-C stops the script alone;
    Python itself then leaves SIGINT alone, and so does mcrisk)."""
    return tuple(number for number in STOPS if signal.getsignal(number) != signal.SIG_IGN)


@contextlib.contextmanager
def stops_unwind() -> Iterator[Stops]:
    """Inside the block, a stop raises (module docstring); yields its Stops. A stop this
    process ignores stays ignored (heeded). At the end, what was there before is put back:
    the handlers and sys.unraisablehook, each unless replaced meanwhile (by a caller that
    installs its own for what follows)."""
    stops = Stops()
    if threading.current_thread() is not threading.main_thread():
        yield stops
        return
    previous = {number: signal.signal(number, stops.handler) for number in heeded()}
    previous_hook = sys.unraisablehook

    def hook(unraisable) -> None:
        if not stops.swallowed(unraisable):
            previous_hook(unraisable)

    sys.unraisablehook = hook
    try:
        yield stops
    finally:
        stops.ended = True
        for number, handler in previous.items():
            if signal.getsignal(number) == stops.handler:
                signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if sys.unraisablehook is hook:
            sys.unraisablehook = previous_hook


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM back inside the block; deliver the first one after it.

    Python runs signal handlers in the main thread between bytecodes, so a handler that
    raises (KeyboardInterrupt, Terminated) could otherwise land between two renames.
    Outside the main thread handlers cannot be changed, and nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {number: signal.signal(number, lambda n, _frame: caught.append(n))
                for number in STOPS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if caught:
            _deliver(caught[0], previous[caught[0]])


def _deliver(number: int, handler) -> None:
    """Do what `handler`, the one in place before signals_held, does with signal `number`."""
    if callable(handler):
        handler(number, None)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), number)
