"""Progress: the phases a run reports (mcrisk.core.progress) and what the command line shows
of them.

The layers below the CLI only announce phases on the Progress object they are handed; the
CLI draws them on stderr, on a terminal and without --quiet only, and stdout never changes.
"""
from __future__ import annotations

import io
import re
import time

import pytest

import mcrisk.cli.progress as cli_progress
from mcrisk.backends import select_backend
from mcrisk.backends.numba import driver
from mcrisk.cli import main
from mcrisk.core.progress import (COMPILE, QUIET, SCENARIOS, SIMULATE, SUMMARIZE, WRITE, Phase,
                             Progress, Steps, as_progress)
from mcrisk.app.run import (SUMMARY_STEPS, compiles_noted, prepare_backend, run_scenario,
                        write_steps)
from mcrisk.backends.chunks import simulate

from ..conftest import MINIMAL, REFERENCE


class Recorder(Progress):
    """Every phase as {name, total, unit, note, done, steps, notes, closed}."""

    def __init__(self):
        self.phases = []

    def note(self, text):
        self.phases[-1]["notes"].append(text)

    def phase(self, name, total=None, unit="steps", note=""):
        record = {"name": name, "total": total, "unit": unit, "note": note, "done": 0,
                  "steps": [], "notes": [], "closed": False}
        self.phases.append(record)
        return RecordedPhase(record)

    def names(self):
        return [p["name"] for p in self.phases]


class RecordedPhase(Phase):
    def __init__(self, record):
        self.record = record

    def advance(self, n=1):
        assert not self.record["closed"]
        self.record["done"] += n

    def step(self, name):
        self.record["steps"].append(name)

    def note(self, text):
        self.record["notes"].append(text)

    def close(self):
        self.record["closed"] = True


# ---- what the layers below the CLI report ---------------------------------------------------

def test_simulate_reports_one_phase_counted_in_scenarios(minimal_plan):
    seen = Recorder()
    simulate(minimal_plan, 1000, 1, select_backend("numba"), chunk_size=300, progress=seen)
    assert seen.phases == [{"name": SIMULATE, "total": 1000, "unit": SCENARIOS, "note": "",
                            "done": 1000, "steps": [], "notes": [], "closed": True}]


def test_a_plain_callable_still_sees_the_scenarios_done(minimal_plan):
    calls = []
    simulate(minimal_plan, 1000, 1, select_backend("numba"), chunk_size=300,
             progress=lambda done, total: calls.append((done, total)))
    assert calls == [(300, 1000), (600, 1000), (900, 1000), (1000, 1000)]
    assert as_progress(None) is QUIET
    with pytest.raises(TypeError, match="progress must be"):
        as_progress(3)


def test_a_run_reports_compile_simulate_summarize_write_in_order(tmp_path):
    seen = Recorder()
    run_scenario(str(MINIMAL), samples=500, seed=2, backend="numba", out_dir=tmp_path / "out",
                 progress=seen, csv=True)
    assert seen.names() == [COMPILE, SIMULATE, SUMMARIZE, WRITE]
    assert all(p["closed"] for p in seen.phases)
    simulated, summarized, written = seen.phases[1:]
    assert (simulated["total"], simulated["done"]) == (500, 500)
    assert summarized["steps"] == list(SUMMARY_STEPS) and summarized["done"] == 4
    assert written["steps"] == list(write_steps(csv=True, report=True))
    assert written["done"] == written["total"] == 4


def test_the_value_of_mitigation_simulates_in_a_phase_of_its_own():
    seen = Recorder()
    run = run_scenario(str(REFERENCE), samples=300, seed=2, backend="numba", risks="pre",
                       progress=seen)
    assert "mitigation" in run.summary
    # the other side's simulation and statistics, each of the three risks mitigated alone
    # and its statistics, then the run's own; no out_dir: no write
    assert seen.names() == [COMPILE, SIMULATE, SIMULATE, SUMMARIZE] + [SIMULATE, SUMMARIZE] * 3 \
        + [SUMMARIZE]
    assert seen.phases[2]["note"].startswith("post mitigation")
    assert seen.phases[2]["done"] == 300
    assert seen.phases[3]["note"] == "the value of mitigation"
    assert seen.phases[4]["note"] == "only cdu-recall mitigated, for the value of each mitigation"
    assert seen.phases[4]["done"] == 300
    assert seen.phases[5]["note"] == "the value of mitigating cdu-recall"


def test_a_precision_run_reports_each_growth_and_each_check(minimal_plan):
    from mcrisk.results.precision import precision_target
    from mcrisk.app.precision import simulate_to_precision

    seen = Recorder()
    result, _ = simulate_to_precision(minimal_plan, 1, select_backend("numba"),
                                      precision_target(1e-6, 1e-6, 500, 3000), 1000, seen)
    assert result.samples == 3000                              # never met: grown to the cap
    names = seen.names()
    assert names[0::2] == [SIMULATE] * (len(names) // 2) and names[1::2] == [SUMMARIZE] * (
        len(names) // 2)
    simulated = [p for p in seen.phases if p["name"] == SIMULATE]
    assert sum(p["done"] for p in simulated) == 3000 and len(simulated) > 1
    assert simulated[1]["note"].startswith("--precision: ")


def test_steps_walk_a_phase_through_its_names():
    seen = Recorder()
    with seen.phase(WRITE, total=3) as phase:
        steps = Steps(phase, ("a", "b", "c"))
        assert (phase.record["steps"], phase.record["done"]) == (["a"], 0)
        steps.next()
        steps.next()
        steps.next()
    assert seen.phases[0]["steps"] == ["a", "b", "c"] and seen.phases[0]["done"] == 3


def test_what_numba_compiles_during_a_run_is_noted_on_the_open_phase(reference_plan):
    # Numba raises `numba:compile` when it compiles, never for a load from its cache (a cold
    # start of the kernel and a second install loading it: tests/backends/test_numba_cache.py).
    import numba

    @numba.njit
    def helper(x):
        return x + 1

    @numba.njit
    def fresh(x):
        return helper(x) * 2

    seen = Recorder()
    with seen.phase(SIMULATE, total=1, unit=SCENARIOS) as phase:
        with compiles_noted(seen):
            fresh(1)
            fresh(2)                   # compiled already: nothing more
        phase.advance()
    notes = seen.phases[0]["notes"]
    assert len(notes) == 2, notes      # the outermost compile only, not `helper` inside it
    assert notes[0] == "Numba is compiling fresh: once after an install or an upgrade, then cached"
    assert re.fullmatch(r"Numba compiled fresh in \d+ s, cached for later runs", notes[1])

    prepared = Recorder()
    prepare_backend("numba", reference_plan, prepared)  # compiled or loaded by now: no note
    assert prepared.names() == [COMPILE] and prepared.phases[0]["notes"] == []
    assert driver.simulate_chunk_kernel.signatures


# ---- what the command line shows -------------------------------------------------------------

class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def _run(monkeypatch, tmp_path, stderr, *extra):
    monkeypatch.setattr(cli_progress, "DELAY", 0.0)          # every phase shows, however short
    monkeypatch.setattr("sys.stderr", stderr)
    stdout = io.StringIO()
    monkeypatch.setattr("sys.stdout", stdout)
    code = main(["run", str(MINIMAL), "--samples", "400", "--seed", "5", "--backend", "numba",
                 "--out", str(tmp_path / "out"), *extra])
    assert code == 0
    # the header's wall time differs from run to run; nothing else on stdout may
    return re.sub(r", [0-9.]+ s\n", ", T s\n", stdout.getvalue())


@pytest.mark.slow
def test_the_terminal_shows_each_phase_on_stderr_and_stdout_is_unchanged(monkeypatch, tmp_path):
    terminal, plain, quiet = FakeTerminal(), io.StringIO(), FakeTerminal()
    shown = _run(monkeypatch, tmp_path, terminal)
    assert _run(monkeypatch, tmp_path, plain) == shown          # not a terminal: nothing
    assert _run(monkeypatch, tmp_path, quiet, "--quiet") == shown
    assert plain.getvalue() == "" and quiet.getvalue() == ""
    lines = [line for line in terminal.getvalue().replace("\r", "\n").splitlines() if line]
    finals = {}
    for line in lines:
        finals[line.split(":")[0]] = line
    assert list(finals) == ["compile", "simulate", "summarize", "write"]
    assert re.search(r"simulate: 100%.*400/400 \[[0-9:]+<[0-9:]+, .* scenarios/s\]",
                     finals["simulate"])                                   # rate and ETA
    assert "4/4 steps" in finals["summarize"] and "3/3 steps" in finals["write"]
    assert "report.html" in finals["write"]


def test_the_clock_refreshes_a_long_step_with_no_count(monkeypatch):
    terminal = FakeTerminal()
    progress = cli_progress.TerminalProgress(terminal, delay=0.0, tick=0.25)
    with progress:
        with progress.phase(COMPILE) as phase:
            phase.note("Numba is compiling")
            assert "Numba is compiling" in terminal.getvalue()       # at once
            before = terminal.getvalue().count("\r")
            time.sleep(1.2)
            assert terminal.getvalue().count("\r") >= before + 3    # still moving
    assert "compile: [00:00], Numba is compiling" in terminal.getvalue()
    assert not progress._clock.is_alive()


def test_a_terminal_that_says_it_has_no_size_still_gets_bars(monkeypatch):
    # A pseudo-terminal may report 0 x 0; tqdm would hide a bar that does not fit.
    terminal = FakeTerminal()
    monkeypatch.setattr(cli_progress, "_has_size", lambda stream: False)
    with cli_progress.TerminalProgress(terminal, delay=0.0) as progress:
        with progress.phase(SIMULATE, total=10, unit=SCENARIOS) as phase:
            phase.advance(10)
    assert "simulate: 100%" in terminal.getvalue()


def test_only_a_terminal_without_quiet_gets_bars():
    assert cli_progress.terminal_progress(False, FakeTerminal()) is not QUIET
    assert cli_progress.terminal_progress(True, FakeTerminal()) is QUIET
    assert cli_progress.terminal_progress(False, io.StringIO()) is QUIET
    closed = FakeTerminal()
    closed.close()
    assert cli_progress.terminal_progress(False, closed) is not None
