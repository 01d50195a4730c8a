"""What a run says while it works: named phases, counted or not, for the command line to show.

Only the CLI prints (the top floor of tests/test_layers.py), so the layers below report
through a Progress object that their caller hands down, phase by phase:

    with progress.phase(SIMULATE, total=samples, unit=SCENARIOS) as phase:
        ...
        phase.advance(count)

A phase counted in steps names the step it starts (`phase.step("drivers")`), and a phase may
say what it is doing (`phase.note(...)`: that Numba is compiling, say). The base class shows
nothing: a quiet run or a library caller passes nothing and pays nothing. The terminal's
implementation, bars with a rate and an ETA, is mcrisk.cli.progress. A plain callable
progress(done, total), what earlier versions took, still works (as_progress): it is called
as the scenarios of each simulation are done.
"""
from __future__ import annotations

from typing import Callable

# The phases of a run, in order (a --precision run simulates more than once, and the value
# of mitigation simulates the other side of the register after the run's own simulation).
COMPILE = "compile"        # the backend gets its kernel ready: Numba compiles or loads it
SIMULATE = "simulate"      # counted in scenarios
SUMMARIZE = "summarize"    # counted in steps: statistics of the results
WRITE = "write"            # counted in steps: the output files
SCENARIOS = "scenarios"
STEPS = "steps"


class Phase:
    """One phase while it runs. The base class records nothing; a phase is a context
    manager, closed when its block ends (also by an exception)."""

    def advance(self, n: int = 1) -> None:
        """n more units (scenarios, steps) of the phase are done."""

    def step(self, name: str) -> None:
        """The step called `name` starts (in a phase counted in steps)."""

    def note(self, text: str) -> None:
        """What the phase is doing now, in a few words, e.g. that Numba is compiling."""

    def close(self) -> None:
        """The phase has ended."""

    def __enter__(self) -> "Phase":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Progress:
    """Receives a run's phases. The base class shows nothing. A context manager: its owner
    closes it when the command ends (a terminal's progress stops its clock then)."""

    def phase(self, name: str, total: int | None = None, unit: str = STEPS,
              note: str = "") -> Phase:
        """A new phase called `name`, of `total` units (None: not counted), with an opening
        note. Use it as a context manager."""
        return Phase()

    def note(self, text: str) -> None:
        """A note on the phase open now, from something that does not know which one it is
        (that Numba is compiling, say); an empty text clears it."""

    def close(self) -> None:
        """No more phases."""

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


QUIET = Progress()


class _CountingPhase(Phase):
    def __init__(self, callback: Callable[[int, int], None], total: int):
        self.callback, self.total, self.done = callback, total, 0

    def advance(self, n: int = 1) -> None:
        self.done += n
        self.callback(self.done, self.total)


class CallbackProgress(Progress):
    """Progress for a plain callable `callback(done, total)`: called as the scenarios of each
    simulation are done (other phases are not passed on)."""

    def __init__(self, callback: Callable[[int, int], None]):
        self.callback = callback

    def phase(self, name: str, total: int | None = None, unit: str = STEPS,
              note: str = "") -> Phase:
        if unit != SCENARIOS or total is None:
            return Phase()
        return _CountingPhase(self.callback, total)


class Steps:
    """Walks a phase counted in steps through their names: next() ends the current step and
    starts the next one (the first starts at once)."""

    def __init__(self, phase: Phase, names: tuple[str, ...]):
        self.phase, self.names, self.done = phase, names, -1
        self.next()

    def next(self) -> None:
        if self.done >= 0:
            self.phase.advance()
        self.done += 1
        if self.done < len(self.names):
            self.phase.step(self.names[self.done])


def as_progress(progress: "Progress | Callable[[int, int], None] | None") -> Progress:
    """`progress` as a Progress: QUIET for None, a callable wrapped (CallbackProgress)."""
    if progress is None:
        return QUIET
    if isinstance(progress, Progress):
        return progress
    if callable(progress):
        return CallbackProgress(progress)
    raise TypeError(f"progress must be a mcrisk.core.progress.Progress, a callable "
                    f"progress(done, total) or None, not {type(progress).__name__}")
