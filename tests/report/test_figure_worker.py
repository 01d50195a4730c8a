"""The report's figures drawn in a second process (mcrisk.report.figures.worker) are the figures
drawn in this one, byte for byte; a worker that does not start, dies, or fails a figure loses
nothing (this process draws what it did not); what a worker is sent does not grow with the
number of scenarios (report.figures.data's stand-ins, the metrics as 401 quantiles)."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import time
from types import SimpleNamespace

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.core.definitions import N_METRICS
from mcrisk.report.figures import data
from mcrisk.report.figures import charts as figures
from mcrisk.report import submit_metric_figures
from mcrisk.results.bands import BandCollector
from mcrisk.report.figures import worker
from mcrisk.report.figures.worker import FigurePool
from mcrisk.report.figures.paths import SEVERITY, representative_paths
from mcrisk.backends.chunks import simulate
from ..helpers import ROOT

CPU = select_backend("cpu")
SEED = 5


@pytest.fixture(scope="module")
def small_run(reference_plan, reference_scenario):
    """What report_parts reads of a run: the reference, 300 scenarios, no costs section."""
    collector = BandCollector(reference_plan)
    result = simulate(reference_plan, 300, SEED, CPU, chunk_size=128, chunk_hooks=(collector,))
    detail = SimpleNamespace(bands=collector.bands(), hall_power=collector.hall_power())

    def replay(index):
        metrics, world, nodes = CPU.simulate_chunk(reference_plan, SEED, index, 1,
                                                   keep_nodes=True)
        return metrics[..., :N_METRICS], world, nodes

    return SimpleNamespace(plan=reference_plan, result=result, detail=detail, replay=replay,
                           scenario=reference_scenario)


def jobs(pool: FigurePool, run) -> None:
    """Every figure report_parts submits for `run` (its costs aside)."""
    plan, metrics, detail = run.plan, run.result.metrics, run.detail
    colors = data.strategy_colors(plan.strategy_names)
    submit_metric_figures(pool, plan, metrics, None)
    paths = {chart: representative_paths(plan, run.replay, metrics, severity)
             for chart, severity in SEVERITY.items()}
    lines, bands = data.plan_lines(plan), data.band_arrays(detail.bands)
    pool.submit("fan", "charts", "fan_chart", lines, bands, colors,
                data.path_lines(paths["fan"]))
    pool.submit("island", "charts", "largest_island_chart", lines, bands, colors,
                data.path_lines(paths["island"]))
    pool.submit("power", "charts", "power_chart", data.power_rows(detail.hall_power), colors)


@pytest.fixture(scope="module")
def drawn_here(small_run):
    with FigurePool() as pool:
        jobs(pool, small_run)
        return pool.pngs()


def test_the_stand_ins_draw_the_figures_of_the_objects_they_stand_for(small_run):
    plan, metrics, detail = small_run.plan, small_run.result.metrics, small_run.detail
    colors = data.strategy_colors(plan.strategy_names)
    paths = representative_paths(plan, small_run.replay, metrics, SEVERITY["fan"])
    assert (figures.fan_chart(plan, detail.bands, colors, paths)
            == figures.fan_chart(data.plan_lines(plan), data.band_arrays(detail.bands), colors,
                                 data.path_lines(paths)))
    assert (figures.power_chart(detail.hall_power, colors)
            == figures.power_chart(data.power_rows(detail.hall_power), colors))


@pytest.mark.slow
def test_the_worker_draws_the_same_pngs_as_this_process(small_run, drawn_here):
    with FigurePool(worker=True, steal=False) as pool:
        assert pool.uses_worker
        jobs(pool, small_run)
        pngs = pool.pngs()
        assert pool.by_worker == set(drawn_here)         # this process drew none of them
    assert list(pngs) == list(drawn_here)
    assert all(pngs[name] == drawn_here[name] for name in drawn_here)
    assert all(png.startswith(b"\x89PNG") for png in pngs.values())


# Workers that go wrong: each replaces the worker's start (pickled by reference, so the worker
# imports it from this module), which then breaks the worker's own draw() in its process.
def never_starts() -> None:
    raise RuntimeError("no worker today")


def dies_at_once() -> None:
    worker.draw = lambda *job: os._exit(3)


def fails_a_figure() -> None:
    def fail(*job):
        raise RuntimeError("this figure fails in the worker")
    worker.draw = fail


def draws_one_then_dies() -> None:
    real, drawn = worker.draw, []

    def once(*job):
        if drawn:
            os._exit(3)
        drawn.append(job)
        return real(*job)
    worker.draw = once


def stalls() -> None:
    worker.draw = lambda *job: time.sleep(3600)


@pytest.mark.slow                  # a worker process each: about 2 s, the stall 6 s
@pytest.mark.parametrize("start", [never_starts, dies_at_once, fails_a_figure,
                                   draws_one_then_dies, stalls],
                         ids=["no start", "dies", "fails", "draws one, dies", "stalls"])
def test_a_failing_worker_loses_no_figure(monkeypatch, small_run, drawn_here, start):
    monkeypatch.setattr(worker, "start_worker", start)
    monkeypatch.setattr(worker, "STALL_SECONDS", 5.0)
    with FigurePool(worker=True, steal=False) as pool:
        jobs(pool, small_run)
        pngs = pool.pngs()
    assert list(pngs) == list(drawn_here)
    assert all(pngs[name] == drawn_here[name] for name in drawn_here)
    assert pool.by_worker == ({"trough"} if start is draws_one_then_dies else set())


def test_what_the_worker_is_sent_does_not_grow_with_the_scenarios(reference_plan):
    """The curve charts go as 401 quantiles per strategy, never the metrics themselves."""
    sizes = []
    for n in (1_000, 200_000):
        metrics = np.random.default_rng(0).gamma(2.0, 50.0, (n, 5, N_METRICS))
        sent = []
        pool = SimpleNamespace(submit=lambda *job: sent.append(job))
        submit_metric_figures(pool, reference_plan, metrics, None)
        assert [job[0] for job in sent] == ["trough", "homeless", "completion"]
        sizes.append(len(pickle.dumps(sent)))
    assert sizes[1] < 1.1 * sizes[0] and sizes[1] < 200_000


@pytest.mark.slow
def test_a_run_has_its_figures_drawn_by_the_worker(tmp_path):
    """run_scenario in a fresh interpreter (the worker forced: other tests load the machine):
    up to the moment it waits for its figures the run has not imported matplotlib (the
    worker has, meanwhile), the worker drew the first figures submitted, and report.html has
    every figure."""
    code = textwrap.dedent(f"""
        import sys
        from mcrisk.report.figures import worker
        from mcrisk.app.run import run_scenario

        pngs = worker.FigurePool.pngs
        def watched(pool):
            print("matplotlib" in sys.modules)
            drawn = pngs(pool)
            print(sorted(pool.by_worker))
            return drawn
        worker.FigurePool.pngs = watched
        run_scenario("scenarios/reference-2048.toml", samples=500,
                     out_dir={str(tmp_path / 'out')!r})
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(ROOT),
                          env=dict(os.environ, MCRISK_FIGURE_WORKER="force"))
    assert done.returncode == 0, done.stderr[-2000:]
    imported, by_worker = done.stdout.strip().splitlines()[-2:]
    assert imported == "False"
    assert "'trough'" in by_worker
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 7


@pytest.mark.parametrize("load, setting, imported, wanted", [
    (0.2, "", False, True),
    (1.8, "", False, False),                 # both cores of two busy: no core to gain
    (1.8, "force", False, True),
    (0.2, "0", False, False),
    (0.2, "", True, False),                  # matplotlib here already: draw here
])
def test_a_worker_only_where_a_core_would_idle(monkeypatch, load, setting, imported, wanted):
    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(worker.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setitem(sys.modules, "__main__", SimpleNamespace())      # python -c
    monkeypatch.setenv("MCRISK_FIGURE_WORKER", setting)
    if not imported:
        monkeypatch.delitem(sys.modules, "matplotlib")
    assert worker.worker_wanted() is wanted


def _cli_main():
    """Stands for the `mcrisk` command's main."""


_cli_main.__module__ = "mcrisk.cli"


def _entry_main():
    """Stands for the `mcrisk` command's main since it enters through mcrisk.__main__."""


_entry_main.__module__ = "mcrisk.__main__"


@pytest.mark.parametrize("main, safe", [
    (SimpleNamespace(), True),                                          # python -c, a REPL
    (SimpleNamespace(__file__="m.py", __spec__=SimpleNamespace(name="mcrisk.__main__")), True),
    (SimpleNamespace(__file__="bin/mcrisk", __spec__=None, main=_cli_main), True),
    (SimpleNamespace(__file__="bin/mcrisk", __spec__=None, main=_entry_main), True),
    (SimpleNamespace(__file__="my_script.py", __spec__=None), False),   # may run again
    (SimpleNamespace(__file__="my_script.py", __spec__=None, main=print), False),
])
def test_a_worker_only_where_the_main_script_would_not_run_again(monkeypatch, main, safe):
    """spawn imports the main script again in the worker: a script that calls mcrisk at its
    top level would run twice, so only known entry points get a worker unless forced."""
    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(worker.os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setenv("MCRISK_FIGURE_WORKER", "")
    assert worker.worker_wanted() is safe
    monkeypatch.setenv("MCRISK_FIGURE_WORKER", "force")
    assert worker.worker_wanted() is True
