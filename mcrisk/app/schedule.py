"""`mcrisk schedule`: simulate a scenario and keep one strategy's milestones.

The milestones themselves (what they are, how their times reduce over scenarios) are
mcrisk.results.milestones; this module runs the simulation that streams them, in this process or on
Dask workers (mcrisk.backends.dask: the same chunk hooks in scenario order, the same numbers).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..backends import Backend
from ..plan.compile import compile_scenario
from ..backends.dask import dask_session
from ..core.errors import McriskError
from ..plan.window import as_of_of
from ..results.milestones import MilestoneCollector
from ..core.progress import as_progress
from .run import compiles_noted, load_for_run, prepare_backend
from ..backends.chunks import check_memory, default_chunk, simulate


@dataclass(frozen=True)
class Schedule:
    """One strategy's milestones (summary.json's `milestones` with only that strategy) and
    the backend that ran (a Dask backend tells the chunks retried after a lost worker)."""

    milestones: dict
    backend: Backend


def run_schedule(path: str | os.PathLike, strategy: str, samples: int, seed: int,
                 backend: str = "auto", chunk_size: int | None = None, risks: str = "file",
                 disable_risks: tuple[str, ...] = (), progress=None,
                 dask: str | None = None, status: str | os.PathLike | None = None) -> Schedule:
    """Simulate the scenario at `path` (every strategy, as a run does: the same worlds) and
    return summary.json's `milestones` with only `strategy` (McriskError if unknown).
    `progress` (mcrisk.core.progress) sees the phases: compile, simulate. With `dask` (`local:N`
    or a scheduler's address), the chunks run on Dask workers, with the same numbers. With
    `status` (a status file's path), the run is conditioned on what has happened, and the
    milestones reached by its as_of show their actual day."""
    progress = as_progress(progress)
    run = load_for_run(path, risks, disable_risks, status)
    scenario = run.scenario
    if strategy not in [s.name for s in scenario.strategies]:
        names = ", ".join(s.name for s in scenario.strategies)
        raise McriskError(f"{path}: no strategy {strategy!r} (the scenario has: {names})")
    plan = compile_scenario(scenario)
    chunk = default_chunk(plan, chunk_size)
    check_memory(plan, samples, chunk, option="--samples")
    collector = MilestoneCollector(plan, scenario, as_of=as_of_of(run.status))
    with dask_session(dask) as session:
        chosen = prepare_backend(backend, plan, progress, session)
        with compiles_noted(progress):      # the milestones' compiled loops, on a first run
            simulate(plan, samples, seed, chosen, chunk_size=chunk, progress=progress,
                     chunk_hooks=(collector,), keep_world=0)
    summary = collector.summary()
    summary["strategies"] = {strategy: summary["strategies"][strategy]}
    summary["strategy"] = strategy
    return Schedule(summary, chosen)
