"""`mcrisk compare`: two strategies of one scenario, paired on the same sampled worlds.

Loads the scenario once, simulates it (every strategy: the worlds are the same whichever
strategies are compared) and pairs A with B scenario by scenario
(mcrisk.results.compare.compare_strategies; with [costs], every cost column too:
compare_costs; with a job mix, every job column: compare_jobs); when the run's risks have
mitigated values,
the value of mitigation for A and B too (mcrisk.app.mitigation). Prints nothing: the CLI does.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from typing import Callable

from ..results.compare import compare_costs, compare_jobs, compare_strategies
from ..backends import Backend
from ..plan.compile import compile_scenario
from ..plan.window import with_window
from ..backends.dask import dask_session
from ..core.errors import McriskError
from ..results.jobs import scenario_job_columns
from .mitigation import mitigation_entry
from ..core.progress import Progress, as_progress
from .run import RiskRun, load_for_run, prepare_backend
from ..backends.chunks import check_memory, default_chunk, simulate


@dataclass(frozen=True)
class Comparison:
    register: RiskRun              # the scenario and its risk register, as run
    backend: Backend
    differences: dict              # {metric: paired difference A - B} (compare_strategies)
    mitigation: dict | None        # summary.json's `mitigation` for A and B, when it applies
    cost_differences: dict = field(default_factory=dict)   # {cost column: paired A - B};
                                                           # empty without [costs]
    currency: str | None = None    # the scenario's [costs] currency; None without costs
    job_differences: dict = field(default_factory=dict)    # {job column: paired A - B};
                                                           # empty without a job mix


def run_comparison(path: str | os.PathLike, a: str, b: str, samples: int, seed: int,
                   backend: str = "auto", chunk_size: int | None = None, risks: str = "file",
                   disable_risks: tuple[str, ...] = (), mitigation: bool = True,
                   progress: Progress | Callable[[int, int], None] | None = None,
                   dask: str | None = None,
                   status: str | os.PathLike | None = None) -> Comparison:
    """Compare strategy A with strategy B of the scenario at `path` on `samples` scenarios.

    A name the scenario does not have is a McriskError naming the closest one; a sample count
    that would not fit in memory is refused before anything runs. `progress`
    (mcrisk.core.progress) sees the phases: compile, simulate (and the other side's simulation).
    With `dask` (`local:N` or a scheduler's address), the chunks run on Dask workers
    (mcrisk.backends.dask), with the same numbers. With `status` (a status file's path),
    both are compared from its status date on, conditioned on what has happened.
    """
    progress = as_progress(progress)
    register = load_for_run(path, risks, disable_risks, status)
    # conditioned on the status the scenario carries; counting its future, [as_of, horizon)
    plan = with_window(compile_scenario(register.scenario), register.status)
    for label, name in (("A", a), ("B", b)):
        if name not in plan.strategy_names:
            close = difflib.get_close_matches(name, plan.strategy_names, n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise McriskError(f"{path}: strategy {label} = {name!r}: no strategy "
                              f"{name!r} in this file ({guess}it has "
                              f"{', '.join(plan.strategy_names)})")
    chunk_size = default_chunk(plan, chunk_size)    # None: the plan's default
    check_memory(plan, samples, chunk_size)
    with dask_session(dask) as session:
        return _compare(register, plan, a, b, samples, seed, chunk_size, mitigation, progress,
                        prepare_backend(backend, plan, progress, session))


def _compare(register: RiskRun, plan, a: str, b: str, samples: int, seed: int,
             chunk_size: int, mitigation: bool, progress: Progress, chosen: Backend
             ) -> Comparison:
    """run_comparison once its backend is ready: simulate, pair A with B."""
    result = simulate(plan, samples, seed, chosen, chunk_size=chunk_size, progress=progress,
                      keep_world=0)
    differences = compare_strategies(result.metrics, list(plan.strategy_names), a, b)
    costs = compare_costs(result.costs, list(plan.strategy_names), a, b)
    jobs = compare_jobs(result.jobs, list(plan.strategy_names), a, b,
                        scenario_job_columns(register.scenario))
    side = register.counterpart() if mitigation else None
    value = None
    if side is not None:
        value = mitigation_entry(side, compile_scenario(side.other), result, chosen, chunk_size,
                                 strategies=list(dict.fromkeys((a, b))), progress=progress)
    return Comparison(register, chosen, differences, value, costs,
                      register.scenario.costs.currency if costs else None, jobs)
