"""Numba compiling, as something a run can say: the one long wait of a first run.

Numba compiles a function the first time it is called with new argument types, unless its
cache holds it: the simulation kernel (backends/numba/driver.py) and the compiled loops of the
results (results/milestone_chunks.py, results/band_chunks.py), 15-60 s in all on two cores
the first time, nothing after. Numba raises its `numba:compile` event when it starts and ends
a compile, never for a load from its cache; numba_compiles turns that into two callbacks, so
that the application layer can note it on the progress phase that is waiting.
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Callable, Iterator


@contextlib.contextmanager
def numba_compiles(started: Callable[[str], None],
                   ended: Callable[[str, float], None]) -> Iterator[None]:
    """Inside the block, started(name) when Numba starts compiling a function and
    ended(name, seconds) when it is done; only for the outermost compile (the functions it
    pulls in are part of it). Nothing when Numba is not loaded: nothing can compile then,
    and loading it only to listen would cost its import."""
    if "numba" not in sys.modules:
        yield
        return
    from numba.core import event

    with event.install_listener("numba:compile", _outermost(event.Listener, started, ended)):
        yield


def _function_name(data: dict | None) -> str:
    function = getattr((data or {}).get("dispatcher"), "py_func", None)
    return getattr(function, "__name__", None) or "a function"


def _outermost(listener: type, started, ended):
    """A numba.core.event Listener passing on the outermost compile's start and end (Numba
    compiles under one global lock, so compiles nest but never overlap)."""

    class Outermost(listener):
        depth, since = 0, 0.0

        def on_start(self, event_) -> None:
            self.depth += 1
            if self.depth == 1:
                self.since = time.perf_counter()
                started(_function_name(event_.data))

        def on_end(self, event_) -> None:
            self.depth -= 1
            if self.depth == 0:
                ended(_function_name(event_.data), time.perf_counter() - self.since)

    return Outermost()
