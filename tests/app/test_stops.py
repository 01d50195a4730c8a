"""A stop ends the `mcrisk` command wherever it lands (issue 24, item 14): exit 128 + the signal
(130 for SIGINT, 143 for SIGTERM), the one-line "stopped by" message and nothing else on
stderr (no traceback, no "Exception ignored"), and every output as it was or complete: while
the command line's modules load, in a finalizer mid-run, during a failed run's cleanup, in
the figure worker's shutdown, and while the process winds down after the command.

Each test runs the command as its installed script does (pyproject.toml's entry point:
`from MODULE import FUNCTION; sys.exit(FUNCTION())`) in a fresh interpreter, after a hook
that makes the process signal itself at the moment under test: the signal arrives there,
every time, with no sleep that could race."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mcrisk.app.run import run_scenario
from mcrisk.core.stops import stop_message, stop_status

from ..helpers import MINIMAL, ROOT

try:
    import tomllib
except ModuleNotFoundError:                     # Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.slow                   # each starts an interpreter, most run mcrisk
STOPS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGINT, id="SIGINT")]
WORLDS = ("--samples", "200", "--backend", "numpy", "--quiet")
LONG = ("--samples", "50,000,000", "--chunk-size", "2000", "--backend", "numpy", "--quiet",
        "--scenarios-out")   # over the row budget: as before, metrics.parquet streamed too


def _entry_point() -> tuple[str, str]:
    """The `mcrisk` command's (module, function), as pyproject.toml names them."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    module, function = scripts["mcrisk"].split("#")[0].strip().split(":")
    return module, function


def _mcrisk(hook: str, *args: str, cwd: Path, figure_worker: str = "0",
            timeout: float = 120) -> subprocess.CompletedProcess:
    """The `mcrisk` command with `args`, as its script runs it, `hook` run first."""
    module, function = _entry_point()
    code = (f"import sys\n{hook}\nsys.argv = ['mcrisk', *{list(args)!r}]\n"
            f"from {module} import {function}\nsys.exit({function}())\n")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env=dict(os.environ, MCRISK_FIGURE_WORKER=figure_worker))


def _stopped(done: subprocess.CompletedProcess, stop: int) -> None:
    """Ended by `stop`: its status, and its message alone on stderr."""
    assert (done.returncode, done.stderr.splitlines()) == (stop_status(stop),
                                                           [stop_message(stop)]), done.stderr


def _tree(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


# The process signals itself (os.kill): Python runs the handler at the next bytecode, in the
# code under test.
SIGNAL_ON_FIRST_IMPORT_OF_NUMPY = """
import builtins, os
_import, _fired = builtins.__import__, []
def _importing(name, *args, **kwargs):
    if name == "numpy" and not _fired:
        _fired.append(True)
        os.kill(os.getpid(), {stop})
    return _import(name, *args, **kwargs)
builtins.__import__ = _importing
"""

SIGNAL_IN_A_FINALIZER_ON_THE_FIRST_CHUNK = """
import os
import mcrisk.app.collect as _collect
class _Finalized:
    def __del__(self):
        os.kill(os.getpid(), {stop})
        for _ in range(3):
            pass                   # the handler runs here, inside the finalizer
_chunk, _fired = _collect.RunCollector._chunk, []
def _first_chunk_drops_a_finalized_object(self, *args):
    if not _fired:
        _fired.append(True)
        _Finalized()
    return _chunk(self, *args)
_collect.RunCollector._chunk = _first_chunk_drops_a_finalized_object
"""

SIGNAL_AT_EXIT = """
import atexit, os
def _at_exit():
    os.kill(os.getpid(), {stop})
    for _ in range(1000):
        pass                       # the handler runs here, in an atexit callback
atexit.register(_at_exit)
"""


FAILED_REPORT_AND_SIGNAL_IN_ITS_CLEANUP = """
import errno, os, shutil
import mcrisk.report
def _broken_report(*args, **kwargs):
    raise OSError(errno.EIO, "Input/output error")
mcrisk.report.write_report = _broken_report
_rmtree, _fired = shutil.rmtree, []
def _removing(*args, **kwargs):
    if not _fired:
        _fired.append(True)
        os.kill(os.getpid(), {stop})   # the handler would run before the staging folder goes
    return _rmtree(*args, **kwargs)
shutil.rmtree = _removing
"""


@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("via", ["script", "python -m"])
def test_a_stop_while_the_command_line_loads_ends_with_the_message(stop, via, tmp_path):
    # the console script imported mcrisk.cli (half a second) before any handler was set
    hook = SIGNAL_ON_FIRST_IMPORT_OF_NUMPY.format(stop=int(stop))
    if via == "script":
        done = _mcrisk(hook, "validate", str(MINIMAL), cwd=tmp_path)
    else:
        code = (f"import sys, runpy\n{hook}\nsys.argv = ['mcrisk', 'validate', {str(MINIMAL)!r}]\n"
                "runpy.run_module('mcrisk', run_name='__main__', alter_sys=True)\n")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    _stopped(done, stop)
    assert done.stdout == ""


@pytest.mark.parametrize("stop", STOPS)
def test_a_stop_in_a_finalizer_is_not_swallowed_and_the_history_stays_as_it_was(
        stop, tmp_path):
    # Python swallows an exception raised in a finalizer ("Exception ignored in ...
    # Terminated") and carries on: the night ran to its end and exited 0
    history = tmp_path / "history"
    nightly = ("nightly", str(MINIMAL), "--history", str(history))
    assert _mcrisk("", *nightly, *WORLDS, cwd=tmp_path).returncode == 0
    before = _tree(history)
    hook = SIGNAL_IN_A_FINALIZER_ON_THE_FIRST_CHUNK.format(stop=int(stop))
    _stopped(_mcrisk(hook, *nightly, *LONG, cwd=tmp_path), stop)   # would run for hours
    assert _tree(history) == before                  # no .partial folder, the index intact


def test_a_short_night_stopped_in_a_finalizer_does_not_exit_0(tmp_path):
    hook = SIGNAL_IN_A_FINALIZER_ON_THE_FIRST_CHUNK.format(stop=int(signal.SIGTERM))
    done = _mcrisk(hook, "nightly", str(MINIMAL), "--history", str(tmp_path / "history"),
                   *WORLDS, cwd=tmp_path)
    _stopped(done, signal.SIGTERM)


@pytest.mark.parametrize("stop", STOPS)
def test_a_stop_while_the_process_winds_down_ends_it_with_the_message(stop, tmp_path):
    # after main: SIGTERM killed the process without a word (the handler was gone), SIGINT
    # printed "Exception ignored in atexit callback" and a traceback, and the exit was 0
    out = tmp_path / "out"
    done = _mcrisk(SIGNAL_AT_EXIT.format(stop=int(stop)), "run", str(MINIMAL), "--out",
                   str(out), *WORLDS, cwd=tmp_path)
    _stopped(done, stop)
    assert "wrote" in done.stdout                              # its output came out first
    manifest = json.loads((out / ".mcrisk-outputs.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted([*manifest["files"],
                                                            ".mcrisk-outputs.json"])


@pytest.mark.parametrize("stop", STOPS)
def test_a_stop_in_a_failed_runs_cleanup_waits_for_it(stop, tmp_path):
    # the stop landed in the staging folder's removal (a context manager's exit, on the
    # way out of a failed write) and left the staging folder behind
    out = tmp_path / "out"
    run_scenario(str(MINIMAL), samples=100, backend="numpy", out_dir=out, report=False)
    before = _tree(tmp_path)
    done = _mcrisk(FAILED_REPORT_AND_SIGNAL_IN_ITS_CLEANUP.format(stop=int(stop)), "run",
                   str(MINIMAL), "--out", str(out), *WORLDS, cwd=tmp_path)
    _stopped(done, stop)
    assert _tree(tmp_path) == before                 # no staging folder, no lock
