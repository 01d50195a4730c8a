"""The progress a command shows on stderr while it runs: each phase of mcrisk.core.progress as a
tqdm bar, with a rate and an ETA where the phase is counted.

Only on a terminal, and never with --quiet (terminal_progress gives mcrisk.core.progress.QUIET
then, which shows nothing). A phase that ends within DELAY seconds leaves nothing behind; a
longer one leaves its last line (name, count, elapsed time), so the run's phases read as a
log. A clock thread refreshes the open bar every TICK seconds, so that a long step with no
count to advance (Numba compiling, the report being drawn) still shows its time going on,
never a silent pause. A note (that Numba is compiling) shows the bar at once.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import TextIO

from ..core.progress import QUIET, SCENARIOS, Phase, Progress

DELAY = 0.5      # seconds a phase runs before its bar appears
TICK = 1.0       # seconds between refreshes of the open bar by the clock thread
FALLBACK_WIDTH = 100   # columns and lines, where the terminal does not say
FALLBACK_HEIGHT = 24

# {desc} is the phase's name, {postfix} its current step or note.
COUNTED = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
           "[{elapsed}<{remaining}, {rate_fmt}]{postfix}")
STEPPED = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} steps "
           "[{elapsed}<{remaining}]{postfix}")
UNCOUNTED = "{desc}: [{elapsed}]{postfix}"


def terminal_progress(quiet: bool, stream: TextIO | None = None) -> Progress:
    """The progress a command shows: bars on `stream` (stderr) when it is a terminal and not
    `quiet`, else nothing (QUIET)."""
    stream = sys.stderr if stream is None else stream
    if quiet or not _is_terminal(stream):
        return QUIET
    return TerminalProgress(stream, DELAY, TICK)


def _has_size(stream: TextIO) -> bool:
    """Whether the terminal says how large it is: the bars then follow its width, else they
    take FALLBACK_WIDTH and FALLBACK_HEIGHT (a pseudo-terminal may say 0 x 0, and tqdm hides
    a bar that does not fit, so it would show nothing)."""
    try:
        size = os.get_terminal_size(stream.fileno())
        return size.columns > 0 and size.lines > 0
    except (AttributeError, ValueError, OSError):
        return False


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):        # no isatty, or the stream is closed
        return False


class TerminalProgress(Progress):
    """Each phase as a tqdm bar on `stream`, one at a time; close() stops the clock."""

    def __init__(self, stream: TextIO, delay: float = DELAY, tick: float = TICK):
        self.stream, self.delay, self.tick = stream, delay, tick
        self.lock = threading.Lock()
        self.open: _Bar | None = None
        self._stop = threading.Event()
        self._clock: threading.Thread | None = None

    def phase(self, name: str, total: int | None = None, unit: str = "steps",
              note: str = "") -> Phase:
        bar = _Bar(self, name, total, unit, note)
        with self.lock:
            self.open = bar
        if self._clock is None:
            self._clock = threading.Thread(target=self._run_clock, name="mcrisk-progress",
                                           daemon=True)
            self._clock.start()
        return bar

    def note(self, text: str) -> None:
        with self.lock:
            if self.open is not None:
                self.open.note_locked(text)

    def _run_clock(self) -> None:
        while not self._stop.wait(self.tick):
            with self.lock:
                if self.open is not None:
                    self.open.refresh_locked()

    def close(self) -> None:
        """Stop the clock thread and close a bar left open."""
        self._stop.set()
        if self._clock is not None:
            self._clock.join(timeout=2 * self.tick)     # a daemon: never held up on exit
        with self.lock:
            if self.open is not None:
                self.open.close_locked()



class _Bar(Phase):
    """One phase's tqdm bar (made here, lazily imported: a quiet run never loads tqdm)."""

    def __init__(self, owner: TerminalProgress, name: str, total: int | None, unit: str,
                 note: str):
        from tqdm import tqdm

        self.owner = owner
        if total is None:
            layout, unit_name = UNCOUNTED, "it"
        elif unit == SCENARIOS:
            layout, unit_name = COUNTED, f" {unit}"
        else:
            layout, unit_name = STEPPED, unit
        sized = _has_size(owner.stream)
        self.bar = tqdm(total=total, desc=f"{name} ({note})" if note else name,
                        unit=unit_name, unit_scale=unit == SCENARIOS, smoothing=0,
                        file=owner.stream, delay=owner.delay, miniters=0, mininterval=0.2,
                        dynamic_ncols=sized, ncols=None if sized else FALLBACK_WIDTH,
                        nrows=None if sized else FALLBACK_HEIGHT,
                        leave=True, bar_format=layout)
        self.closed = False

    def advance(self, n: int = 1) -> None:
        with self.owner.lock:
            if not self.closed:
                self.bar.update(n)

    def step(self, name: str) -> None:
        with self.owner.lock:
            if not self.closed:
                self.bar.set_postfix_str(name, refresh=False)
                self.bar.update(0)

    def note(self, text: str) -> None:
        with self.owner.lock:
            self.note_locked(text)

    def note_locked(self, text: str) -> None:
        """Show the note, and the bar at once: a note is worth seeing (Numba compiling); an
        empty text clears it (the owner's lock held)."""
        if not self.closed:
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.delay = 0               # tqdm then counts the bar as shown, and ends it
            self.bar.refresh()

    def refresh_locked(self) -> None:
        """The clock's refresh (the owner's lock held): elapsed time and rate move on, once
        the bar's delay has passed (tqdm's update(0) redraws when TICK >= its mininterval)."""
        if not self.closed:
            self.bar.update(0)

    def close(self) -> None:
        with self.owner.lock:
            self.close_locked()

    def close_locked(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.bar.close()
        if self.owner.open is self:
            self.owner.open = None
