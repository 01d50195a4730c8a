"""The race: successive halving of candidate plans on common sampled worlds.

Stage k runs every surviving candidate on scenarios 0 .. race.scenarios[k] - 1 of the race's
seed: the same worlds for every candidate (draws are addressed by scenario and quantity name,
mcrisk.core.rng), so their differences are the plans' own. A candidate is a strategy plus a crew
count, which a strategy carries (Strategy.crews): the candidates of a stage are compiled
once as a scenario whose strategies are the candidates, each with its own crews, then
simulated by the usual chunked driver (mcrisk.backends.chunks, after its memory check): one
launch. A candidate's results on a world do not depend on which other strategies share its
plan, so a stage simulates only the scenarios the previous stages did not (scenarios
n_{k-1} .. n_k - 1) and appends them to what the survivors already have.

After each stage mcrisk.optimize.objective.eliminate drops the candidates infeasible beyond
noise and keeps the best `keep` fraction plus every one tied with the worst kept within
noise (Pareto goal: the noise-aware Pareto set and the best by each objective); after the
last stage only the infeasible are dropped (Pareto: the set and the bests), and the rest is
ranked by the objective, ties by candidate index. Every host-side choice is deterministic, so
the same candidates and seed give the same survivors on every backend and chunk size.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..backends import Backend
from ..plan.compile import compile_scenario
from ..core.model import Scenario
from ..core.progress import Progress, as_progress
from ..backends.chunks import check_memory, default_chunk, simulate
from .objective import eliminate, goal_of


@dataclass(frozen=True)
class Stage:
    """One stage of the race: its scenarios (0 .. scenarios - 1 of the race seed), the
    candidates that ran and went on, how many of them were infeasible beyond noise, and the
    wall seconds it took (simulation and statistics)."""

    number: int                 # 1-based
    scenarios: int
    candidates_in: int
    candidates_out: int
    infeasible: int
    seconds: float


@dataclass(frozen=True)
class RaceResult:
    """A race's outcome. `ranking`: the candidates (indices into the race's candidates) that
    survived the last stage, best first by the objective on its scenarios (ties by index);
    `pareto`: for a Pareto goal the noise-aware Pareto set among them (ascending), else ();
    `values`: every candidate's objective value on the last stage it ran; `eliminated_at`:
    candidate -> the stage that dropped it; `infeasible`: the candidates dropped as
    infeasible beyond noise, at whichever stage."""

    seed: int
    stages: tuple[Stage, ...]
    ranking: tuple[int, ...]
    pareto: tuple[int, ...]
    values: dict[int, float]
    eliminated_at: dict[int, int]
    infeasible: tuple[int, ...]


def plan_scenario(scenario: Scenario, plans: Sequence[tuple]) -> Scenario:
    """The scenario whose strategies are `plans` ((strategy, crews) pairs, in that order),
    each hiring its own crews and renamed to its position (a candidate may share a written
    strategy's name): every candidate of a stage in one plan, ready to compile."""
    return dataclasses.replace(scenario, strategies=tuple(
        dataclasses.replace(strategy, name=f"plan-{i}", crews=crews)
        for i, (strategy, crews) in enumerate(plans)))


def simulate_plans(scenario: Scenario, plans: Sequence[tuple], backend: Backend, seed: int,
                   first: int, samples: int, chunk_size: int | None = None,
                   progress: Progress | None = None, note: str = "",
                   option: str = "race.scenarios") -> tuple[np.ndarray, np.ndarray | None]:
    """metrics[samples, p, 6] and costs[samples, p, n_costs] (None without [costs]) of the
    plans ((strategy, crews) pairs, in that order) on scenarios first .. first + samples - 1 of
    `seed`: one compile and one simulation, every plan a strategy with its own crews. `option`
    names the setting that asked for `samples` in the memory check's message."""
    plan = compile_scenario(plan_scenario(scenario, plans))
    chunk_size = default_chunk(plan, chunk_size)    # None: the plan's default
    check_memory(plan, samples, chunk_size, option=option)
    backend.prepare(plan)
    result = simulate(plan, samples, seed, backend, chunk_size=chunk_size, first=first,
                      progress=as_progress(progress), keep_world=0,
                      note=f"{note}{len(plans)} plans")
    return result.metrics, result.costs


def race(space, scenario: Scenario, candidates: Sequence, backend: Backend,
         progress: Progress | None = None, chunk_size: int | None = None) -> RaceResult:
    """Race `candidates` (each with .strategy and .crews) over space.race.scenarios on seed
    space.race.seed, by space.objective under space.constraints (see the module docstring)."""
    return race_candidates(scenario, [(c.strategy, c.crews) for c in candidates], backend,
                           goal_of(space.objective), space.constraints,
                           space.race.scenarios, space.race.keep, space.race.seed,
                           progress, chunk_size)


def race_candidates(scenario: Scenario, plans: Sequence[tuple], backend: Backend, goal,
                    constraints: Sequence, stages: Sequence[int], keep: float, seed: int,
                    progress: Progress | None = None,
                    chunk_size: int | None = None) -> RaceResult:
    """The race of `plans` ((strategy, crews) pairs; candidate i is plans[i]) with a parsed
    goal (objective.Goal), `constraints` (.statistic, .max), stage sizes `stages` (strictly
    ascending), `keep` in (0, 1] and `seed`."""
    if not plans:
        raise ValueError("no candidates to race")
    if any(b <= a for a, b in zip(stages, stages[1:])) or not stages or stages[0] < 1:
        raise ValueError(f"race stages must be ascending scenario counts, got {list(stages)}")
    alive = list(range(len(plans)))
    metrics = costs = None                 # [done, len(alive), ...] of the alive candidates
    done = 0
    records, values, eliminated, infeasible = [], {}, {}, []
    for number, scenarios in enumerate(stages, start=1):
        started = time.perf_counter()
        new_metrics, new_costs = simulate_plans(
            scenario, [plans[i] for i in alive], backend, seed, done, scenarios - done,
            chunk_size, progress, note=f"race stage {number} of {len(stages)}: ")
        metrics = new_metrics if metrics is None else np.concatenate([metrics, new_metrics])
        if new_costs is not None:
            costs = new_costs if costs is None else np.concatenate([costs, new_costs])
        done = scenarios
        final = number == len(stages)
        verdict = eliminate(goal, constraints, metrics, costs, keep, final=final)
        values.update({alive[j]: float(verdict.values[j]) for j in range(len(alive))})
        infeasible += [alive[j] for j in verdict.infeasible]
        for j in set(range(len(alive))) - set(verdict.kept):
            eliminated[alive[j]] = number
        records.append(Stage(number, scenarios, len(alive), len(verdict.kept),
                             len(verdict.infeasible), time.perf_counter() - started))
        positions = list(verdict.kept)                  # best first
        alive = [alive[j] for j in positions]
        metrics = metrics[:, positions]
        costs = None if costs is None else costs[:, positions]
        if not alive:
            break
    pareto = tuple(sorted(alive)) if goal.pareto else ()
    return RaceResult(seed, tuple(records), tuple(alive), pareto, values, eliminated,
                      tuple(sorted(infeasible)))
