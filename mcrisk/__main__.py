"""`python -m mcrisk`, and the `mcrisk` command (pyproject.toml's [project.scripts] names main
here): the command line, with a stop (Ctrl-C, SIGTERM) handled from the first moment to the
last.

The command line's modules take about half a second to import (NumPy, SciPy's special
functions, every stage). main installs the stop handling first (mcrisk.core.stops, which
imports nothing else of mcrisk's), so that a Ctrl-C while they load ends with the one-line
message and exit 130, not an import's traceback (a stop in the first 20 ms or so, while
Python itself starts and finds mcrisk, comes before any code of mcrisk's runs: Python
reports that one). A stop this process was started ignoring (a shell's background job
ignores SIGINT) stays ignored, as Python leaves it. Once the command is done, a stop that
arrives while the interpreter winds down (atexit callbacks, the pools' joins, finalizers)
ends the process at once, with the same message and status 128 + the signal: the command's
files are complete or removed by then, and Python would otherwise print a traceback (SIGINT)
or die silently (SIGTERM).

That last step lasts until the process ends, so only the process's entry point may take it:
in-process callers use mcrisk.cli.main.
"""
from __future__ import annotations

import os
import signal
import sys

from .core.stops import EXIT_SIGNAL_BASE, heeded, stop_message, stop_status, stops_unwind


def main(argv: list[str] | None = None) -> int:
    """Run the command line (mcrisk.cli.main) as this process's command; its exit status."""
    with stops_unwind() as stops:
        try:
            from .cli import main as command     # the slow imports, with stops handled
            status = command(argv)
            stops.settle()
        except KeyboardInterrupt as stop:
            signum = stops.caught(stop)
            print(stop_message(signum), file=sys.stderr)
            status = stop_status(signum)
        _end_at_once_on_a_stop(status)
    return status


def _end_at_once_on_a_stop(status: int) -> None:
    """From now on, a stop ends the process at once: with `status` when that is a stop's
    (its message is out), else with the new stop's message and status. Output still in
    Python's buffers is written first; the message goes straight to the descriptor, since
    the stop may have landed inside a write to stderr."""
    def end(signum: int, _frame) -> None:
        code = status
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:                 # a closed pipe, a write cut in two: go on
                pass
        if code < EXIT_SIGNAL_BASE:
            code = stop_status(signum)
            try:
                os.write(2, (stop_message(signum) + "\n").encode())
            except OSError:
                pass
        os._exit(code)

    for number in heeded():
        signal.signal(number, end)


if __name__ == "__main__":
    sys.exit(main())
