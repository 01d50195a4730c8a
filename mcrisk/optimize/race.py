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
ranked by the objective, ties by candidate index.

Dropping on the objective is provisional; dropping as infeasible is not. A constraint
violated in a few worlds in a thousand shows only on enough worlds: at a stage of 500 the
plans that break it look feasible and, being cheap, win on the objective, and the plans that
never break it are dropped; at the next stage every survivor turns infeasible and the race
would end with nothing while feasible plans exist. So a candidate dropped on the objective
goes to a reserve (ordered by the stage that dropped it, latest first, then by its objective
value there: for a Pareto goal by the sum of its ranks on the objectives, which adds no unit
to another; ties by index), and whenever a stage finds survivors infeasible (each was kept in
place of the candidates an earlier stage dropped), as many candidates of the reserve, best
first, are re-admitted: run on every scenario of the stage, judged on its constraints, and
re-admitted again in place of each that fails, until every lost place is filled or the
reserve is empty; then the stage eliminates among survivors and re-admitted alike. A
candidate thus leaves the race for good only as infeasible beyond noise, or behind enough
candidates that stayed feasible; the race ends with no candidate only when every candidate
broke a constraint beyond noise on the race's worlds, so a space that holds a feasible plan
(one that breaks no constraint in any world) always yields one, at the cost of simulating a
re-admitted candidate as often as the survivors it replaces. Every host-side choice is
deterministic, so the same candidates and seed give the same survivors on every backend and
chunk size.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..backends import Backend
from ..plan.compile import compile_scenario
from ..plan.window import with_window
from ..core.model import Scenario
from ..core.progress import Progress, as_progress
from ..backends.chunks import check_memory, default_chunk, simulate
from .objective import eliminate, goal_of, infeasible, ordering_values
from .threshold import with_branches


@dataclass(frozen=True)
class Stage:
    """One stage of the race: its scenarios (0 .. scenarios - 1 of the race seed), the
    candidates that entered it, the candidates re-admitted from the reserve in place of
    survivors it found infeasible, how many of them all were infeasible beyond noise, those
    that went on, and the wall seconds it took (simulation and statistics)."""

    number: int                 # 1-based
    scenarios: int
    candidates_in: int
    candidates_out: int
    infeasible: int
    seconds: float
    readmitted: int = 0


@dataclass(frozen=True)
class RaceResult:
    """A race's outcome. `ranking`: the candidates (indices into the race's candidates) that
    survived the last stage, best first by the objective on its scenarios (ties by index);
    `pareto`: for a Pareto goal the noise-aware Pareto set among them (ascending), else ();
    `values`: every candidate's objective value on the last stage it ran; `eliminated_at`:
    candidate -> the stage that dropped it last; `infeasible`: the candidates dropped as
    infeasible beyond noise, at whichever stage; `reserve`: those dropped on the objective and
    never found infeasible, in the order the race would re-admit them (best first), for the
    evaluation to draw on when a chosen plan breaks a constraint on the fresh worlds."""

    seed: int
    stages: tuple[Stage, ...]
    ranking: tuple[int, ...]
    pareto: tuple[int, ...]
    values: dict[int, float]
    eliminated_at: dict[int, int]
    infeasible: tuple[int, ...]
    reserve: tuple[int, ...] = ()


def plan_scenario(scenario: Scenario, plans: Sequence[tuple]) -> Scenario:
    """The scenario whose strategies are `plans` ((strategy, crews) pairs, in that order),
    each hiring its own crews and renamed to its position (a candidate may share a written
    strategy's name): every candidate of a stage in one plan, ready to compile. A contingent
    strategy's decision names its branches by their new names (a name's first plan: the
    written strategies come before the candidates)."""
    renamed: dict[str, str] = {}
    for i, (strategy, _) in enumerate(plans):
        renamed.setdefault(strategy.name, f"plan-{i}")

    def decision(strategy):
        d = strategy.decision
        return d and dataclasses.replace(d, met=renamed[d.met], unmet=renamed[d.unmet])

    return dataclasses.replace(scenario, strategies=tuple(
        dataclasses.replace(strategy, name=f"plan-{i}", crews=crews, decision=decision(strategy))
        for i, (strategy, crews) in enumerate(plans)))


def simulate_plans(scenario: Scenario, plans: Sequence[tuple], backend: Backend, seed: int,
                   first: int, samples: int, chunk_size: int | None = None,
                   progress: Progress | None = None, note: str = "",
                   option: str = "race.scenarios") -> tuple[np.ndarray, np.ndarray | None]:
    """metrics[samples, p, 6] and costs[samples, p, n_costs] (None without [costs]) of the
    plans ((strategy, crews) pairs, in that order) on scenarios first .. first + samples - 1 of
    `seed`: one compile and one simulation, every plan a strategy with its own crews. `option`
    names the setting that asked for `samples` in the memory check's message. A contingent
    plan's written branches, when not among `plans`, are simulated beside them once (however
    many thresholds name them) and left out of what is returned."""
    simulated = with_branches(scenario, plans)
    # with a status (the scenario carries it), every plan counts the future, [as_of, horizon)
    plan = with_window(compile_scenario(plan_scenario(scenario, simulated)), scenario.status)
    chunk_size = default_chunk(plan, chunk_size)    # None: the plan's default
    check_memory(plan, samples, chunk_size, option=option)
    backend.prepare(plan)
    result = simulate(plan, samples, seed, backend, chunk_size=chunk_size, first=first,
                      progress=as_progress(progress), keep_world=0,
                      note=f"{note}{len(plans)} plans")
    n = len(plans)
    return result.metrics[:, :n], None if result.costs is None else result.costs[:, :n]


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
    ascending), `keep` in (0, 1] and `seed` (see the module docstring)."""
    if not plans:
        raise ValueError("no candidates to race")
    if any(b <= a for a, b in zip(stages, stages[1:])) or not stages or stages[0] < 1:
        raise ValueError(f"race stages must be ascending scenario counts, got {list(stages)}")
    field = _Field(scenario, plans, backend, seed, chunk_size, progress)
    records, values, eliminated, infeasible_ones = [], {}, {}, []
    reserve: list[tuple[tuple, int]] = []       # (order key, candidate), best first
    for number, scenarios in enumerate(stages, start=1):
        started = time.perf_counter()
        note = f"race stage {number} of {len(stages)}"
        entered = len(field.alive)
        field.extend_to(scenarios, f"{note}: ")
        # every survivor of an earlier stage took the place of a candidate it dropped: each
        # one found infeasible here gives its place back to the reserve's best
        lost = field.count_infeasible(constraints, start=0) if number > 1 else 0
        readmitted = 0
        while lost and reserve:
            batch = [candidate for _, candidate in reserve[:lost]]
            del reserve[:lost]
            first = field.admit(batch, f"{note}, re-admitted: ")
            for candidate in batch:
                eliminated.pop(candidate, None)
            readmitted += len(batch)
            lost = field.count_infeasible(constraints, start=first)
        verdict = eliminate(goal, constraints, field.metrics, field.costs, keep,
                            final=number == len(stages))
        alive = field.alive
        values.update({alive[j]: float(verdict.values[j]) for j in range(len(alive))})
        infeasible_ones += [alive[j] for j in verdict.infeasible]
        dropped = set(range(len(alive))) - set(verdict.kept)
        for j in dropped:
            eliminated[alive[j]] = number
        on_objective = sorted(dropped - set(verdict.infeasible))
        if on_objective:
            key = ordering_values(goal, field.metrics, field.costs)
            reserve += [((-number, float(key[j]), alive[j]), alive[j]) for j in on_objective]
            reserve.sort()
        records.append(Stage(number, scenarios, entered, len(verdict.kept),
                             len(verdict.infeasible), time.perf_counter() - started,
                             readmitted))
        field.keep_only(verdict.kept)                   # best first
        if not field.alive:
            break
    alive = tuple(field.alive)
    pareto = tuple(sorted(alive)) if goal.pareto else ()
    return RaceResult(seed, tuple(records), alive, pareto, values, eliminated,
                      tuple(sorted(infeasible_ones)), tuple(c for _, c in reserve))


class _Field:
    """The candidates in the race and their results on scenarios 0 .. done - 1 of the race
    seed (metrics[done, alive, 6], costs[done, alive, n] or None), in `alive`'s order."""

    def __init__(self, scenario: Scenario, plans: Sequence[tuple], backend: Backend, seed: int,
                 chunk_size: int | None, progress: Progress | None):
        self.scenario, self.plans, self.backend, self.seed = scenario, plans, backend, seed
        self.chunk_size, self.progress = chunk_size, progress
        self.alive = list(range(len(plans)))
        self.metrics = self.costs = None
        self.done = 0

    def extend_to(self, scenarios: int, note: str) -> None:
        """Run every candidate in the field on scenarios done .. scenarios - 1."""
        metrics, costs = self._simulate(self.alive, self.done, scenarios - self.done, note)
        self.metrics = metrics if self.metrics is None else np.concatenate([self.metrics, metrics])
        if costs is not None:
            self.costs = costs if self.costs is None else np.concatenate([self.costs, costs])
        self.done = scenarios

    def admit(self, candidates: Sequence[int], note: str) -> int:
        """Add `candidates` to the field, run on scenarios 0 .. done - 1 (the same worlds as
        the rest); returns the position of the first of them."""
        first = len(self.alive)
        metrics, costs = self._simulate(candidates, 0, self.done, note)
        self.metrics = np.concatenate([self.metrics, metrics], axis=1)
        if costs is not None:
            self.costs = np.concatenate([self.costs, costs], axis=1)
        self.alive += list(candidates)
        return first

    def count_infeasible(self, constraints: Sequence, start: int) -> int:
        """How many of the field's candidates from position `start` on are infeasible beyond
        noise on the scenarios run."""
        costs = None if self.costs is None else self.costs[:, start:]
        return int(np.count_nonzero(infeasible(constraints, self.metrics[:, start:], costs)))

    def keep_only(self, positions: Sequence[int]) -> None:
        """Keep the candidates at `positions` (in that order), with their results."""
        positions = list(positions)
        self.alive = [self.alive[j] for j in positions]
        self.metrics = self.metrics[:, positions]
        self.costs = None if self.costs is None else self.costs[:, positions]

    def _simulate(self, candidates: Sequence[int], first: int, samples: int, note: str):
        return simulate_plans(self.scenario, [self.plans[i] for i in candidates], self.backend,
                              self.seed, first, samples, self.chunk_size, self.progress,
                              note=note)
