"""The fresh-seed evaluation: the figures of the chosen plans, free of the winner's curse.

The race chose its survivors on the race seed's worlds, so their figures there are biased
towards luck (the best of many noisy estimates is optimistic). Here the chosen plans (the top
`evaluate.top` of the race's ranking, or its Pareto set) and the scenario file's written
strategies run again on a FRESH seed (evaluate.seed: the race seed + 1 unless the search file
gives one; never the race's), scenarios 0 .. evaluate.samples - 1, all on the same worlds. Per
plan: every statistic the objective and the constraints name, with its 95% interval
(mcrisk.optimize.objective.interval), each constraint's verdict and how sure it is (the
worlds beyond what the constraint allows in one world, and an exact one-sided 95% upper bound
on their share: with none in 20,000 worlds, below 1.5e-4), and the plan paired against the
best written strategy (among those not infeasible beyond noise; among all of them when every
one is): for a single or weighted objective the one with the lowest objective; for a Pareto
objective the one with the lowest sum of its ranks on the objectives among the written
strategies (each objective ranks them on its own, so no dollar is added to an H100-eq day),
ties by the first objective, then file order:

- `columns`: per column the objective names, the per-world difference plan - best written
  (mcrisk.results.compare.paired_difference: mean and P90 with their intervals);
- `objective`: the difference of the objective's values, with an interval at 95% or more
  (objective.weighted_difference_interval: paired for a mean, from the two marginal
  intervals for a quantile or a share; conservative);
- `verdict`: better / worse beyond noise by the paired test of objective.lower_beyond_noise
  (one statistic), by the interval lying wholly on one side of 0 (a weighted sum), by
  dominance beyond noise (Pareto: better when the plan dominates, worse when dominated, n/a
  for a trade), else "within noise".

A chosen plan that violates a constraint on the fresh worlds (beyond noise, as the race
judges) is never presented as found: it is set aside, with its figures, and the next
candidate the race would have offered takes its place (its ranking past the chosen ones,
then its reserve: mcrisk.optimize.race), run on the same fresh worlds, until the places are
filled or no candidate is left. Choosing a replacement looks at the fresh worlds only
through the constraints, never the objective, so the figures stay free of the winner's
curse. For a Pareto objective, how sure each name's membership of the fresh Pareto set is
(a near-tie's can change with the seed): the share of bootstrap resamples of the fresh
worlds on which it is on the set (objective.pareto_support).

Plans are listed best first by the fresh objective (ties by the race's ranking), the written
strategies best first likewise (ties in file order).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..results.compare import paired_difference
from ..backends import Backend
from ..core.model import Scenario
from ..core.progress import Progress
from .objective import (CI_CONFIDENCE, VIOLATED, Goal, column_values, dominates, estimate,
                        estimates, evidence, goal_of, infeasible, interval, lower_beyond_noise,
                        objective_values, order, ordering_values, parse_statistic, pareto_set,
                        pareto_support, rank_sums, verdict, weighted_difference_interval)
from .race import RaceResult, simulate_plans

BETTER, WORSE, WITHIN_NOISE, NOT_APPLICABLE = "better", "worse", "within noise", "n/a"


@dataclass(frozen=True)
class Estimate:
    """A figure and its 95% interval (None where it does not exist); value None where it is
    not a finite number."""

    value: float | None
    ci: tuple[float, float] | None


@dataclass(frozen=True)
class Paired:
    """One plan against the best written strategy `strategy` on the fresh worlds."""

    strategy: str
    objective: Estimate              # plan - best written, of the objective's value
    verdict: str                     # BETTER, WORSE, WITHIN_NOISE or NOT_APPLICABLE
    columns: dict[str, dict]         # column -> paired_difference(plan, best written)


@dataclass(frozen=True)
class PlanFigures:
    """A plan's or a written strategy's figures on the fresh seed. `candidate`: its index
    among the race's candidates (None for a written strategy)."""

    name: str
    written: bool
    crews: int
    candidate: int | None
    objective: Estimate
    statistics: dict[str, Estimate]          # label -> estimate, objective's then constraints'
    constraints: dict[str, str]              # label -> met / violated / within noise
    feasible: bool
    against_best_written: Paired | None      # None for the best written strategy itself
    # label -> how sure the verdict is (objective.evidence: scenarios, over, over_upper,
    # allowed), for the constraints on a quantile or a share
    evidence: dict[str, dict] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Evaluation:
    seed: int
    samples: int
    seconds: float
    best_written: str | None
    plans: tuple[PlanFigures, ...]           # the plans found, best first: none violates
    written: tuple[PlanFigures, ...]         # the written strategies, best first
    pareto: tuple[str, ...]                  # Pareto goal: names on the fresh Pareto set
    set_aside: tuple[PlanFigures, ...] = ()  # chosen, but violating on the fresh worlds
    replacements: int = 0                    # candidates evaluated in their places
    # Pareto goal: name -> the share of bootstrap resamples on which it is on the set
    pareto_support: dict[str, float] = dataclasses.field(default_factory=dict)
    resamples: int = 0                       # the bootstrap resamples pareto_support counts


PARETO_RESAMPLES = 200      # bootstrap resamples of the fresh worlds for pareto_support


def chosen(result: RaceResult, top: int) -> tuple[int, ...]:
    """The candidates the evaluation takes: the race's Pareto set for a Pareto goal, else
    the first `top` of its ranking."""
    return result.pareto if result.pareto else result.ranking[:top]


def spares(result: RaceResult, top: int) -> tuple[int, ...]:
    """The candidates that take a violating chosen plan's place, in the race's order of
    preference: its ranking past the chosen ones, then its reserve."""
    picked = set(chosen(result, top))
    return tuple(i for i in result.ranking if i not in picked) + tuple(result.reserve)


def evaluate(space, scenario: Scenario, candidates: Sequence, result: RaceResult,
             backend: Backend, progress: Progress | None = None,
             chunk_size: int | None = None) -> Evaluation:
    """The chosen plans of `result` (indices into `candidates`, each with .name, .strategy,
    .crews) and the scenario's written strategies on space.evaluate.seed, with
    space.evaluate.samples scenarios (see the module docstring)."""
    top = space.evaluate.top
    return evaluate_plans(scenario, [(i, candidates[i]) for i in chosen(result, top)], backend,
                          goal_of(space.objective), space.constraints,
                          space.evaluate.samples, space.evaluate.seed, progress, chunk_size,
                          spare=[(i, candidates[i]) for i in spares(result, top)])


def evaluate_plans(scenario: Scenario, picked: Sequence[tuple[int, object]], backend: Backend,
                   goal: Goal, constraints: Sequence, samples: int, seed: int,
                   progress: Progress | None = None, chunk_size: int | None = None,
                   spare: Sequence[tuple[int, object]] = ()) -> Evaluation:
    """evaluate's work on explicit arguments: `picked` = [(candidate index, candidate)] in
    the race's order, a parsed goal, `constraints` (.statistic, .max); `spare`, the
    candidates that take a violating plan's place, in that order."""
    started = time.perf_counter()
    own = [(s, s.crews_in(scenario.retrofit)) for s in scenario.strategies]  # each its crews
    entries = ([(s.name, True, crews, None) for s, crews in own]
               + [(c.name, False, c.crews, i) for i, c in picked])
    metrics, costs = simulate_plans(scenario, own + [(c.strategy, c.crews) for _, c in picked],
                                    backend, seed, 0, samples, chunk_size, progress,
                                    note="evaluate: ", option="evaluate.samples")
    spare = list(spare)
    lost = _violating(constraints, metrics, costs, len(own))
    replacements = 0
    while lost and spare:
        batch, spare = spare[:lost], spare[lost:]
        more, more_costs = simulate_plans(scenario, [(c.strategy, c.crews) for _, c in batch],
                                          backend, seed, 0, samples, chunk_size, progress,
                                          note="evaluate, in place of plans that broke a "
                                               "constraint: ", option="evaluate.samples")
        first = len(entries)
        entries += [(c.name, False, c.crews, i) for i, c in batch]
        metrics = np.concatenate([metrics, more], axis=1)
        costs = None if costs is None else np.concatenate([costs, more_costs], axis=1)
        replacements += len(batch)
        lost = _violating(constraints, metrics, costs, first)
    table = _Table(goal, metrics, costs)
    figures = [table.figures(constraints, k, *entry) for k, entry in enumerate(entries)]
    written = list(range(len(own)))
    feasible_written = [k for k in written if figures[k].feasible] or written
    best = table.yardstick(feasible_written) if written else None
    if best is not None:
        figures = [f if k == best else dataclasses.replace(
            f, against_best_written=table.paired(k, best, entries[best][0]))
            for k, f in enumerate(figures)]
    plans = [k for k in range(len(own), len(entries)) if figures[k].feasible]
    set_aside = [k for k in range(len(own), len(entries)) if not figures[k].feasible]
    pareto, support = (), {}
    if goal.pareto:
        among = [k for k in range(len(entries)) if figures[k].feasible]
        pareto = tuple(entries[k][0] for k in pareto_set(goal, metrics, costs, among))
        shares = pareto_support(goal, metrics, costs, among, PARETO_RESAMPLES, seed)
        support = {entries[k][0]: float(share) for k, share in zip(among, shares)}
    return Evaluation(seed, samples, time.perf_counter() - started,
                      None if best is None else entries[best][0],
                      tuple(figures[k] for k in order(table.ordering, plans)),
                      tuple(figures[k] for k in order(table.ordering, written)), pareto,
                      tuple(dataclasses.replace(figures[k], against_best_written=None)
                            for k in order(table.ordering, set_aside)),
                      replacements, support, PARETO_RESAMPLES if goal.pareto else 0)


def _violating(constraints: Sequence, metrics: np.ndarray, costs: np.ndarray | None,
               start: int) -> int:
    """How many of the plans from position `start` on violate a constraint beyond noise."""
    costs = None if costs is None else costs[:, start:]
    return int(np.count_nonzero(infeasible(constraints, metrics[:, start:], costs)))


class _Table:
    """The fresh results of every evaluated plan (the strategies axis of metrics and
    costs) with the goal's columns and objective values taken once."""

    def __init__(self, goal: Goal, metrics: np.ndarray, costs: np.ndarray | None):
        self.goal, self.metrics, self.costs = goal, metrics, costs
        self.columns = [column_values(stat, metrics, costs) for stat in goal.statistics]
        self.values = objective_values(goal, metrics, costs)
        self.ordering = ordering_values(goal, metrics, costs)     # Pareto: no unit added

    def figures(self, constraints: Sequence, k: int, name: str, written: bool, crews: int,
                candidate: int | None) -> PlanFigures:
        """Plan k's statistics, constraint verdicts and objective (not yet paired)."""
        stats = {stat.label: stat for stat in self.goal.statistics}
        stats.update({c.statistic: parse_statistic(c.statistic) for c in constraints})
        own = {label: column_values(stat, self.metrics, self.costs)[:, k]
               for label, stat in stats.items()}
        figures = {label: Estimate(_finite(estimate(stat, own[label])), interval(stat, own[label]))
                   for label, stat in stats.items()}
        verdicts = {c.statistic: verdict(stats[c.statistic], own[c.statistic], c.max)
                    for c in constraints}
        sure = {c.statistic: evidence(stats[c.statistic], own[c.statistic], c.max)
                for c in constraints if stats[c.statistic].kind != "mean"}
        return PlanFigures(name, written, crews, candidate,
                           Estimate(_finite(self.values[k]), self.objective_ci(k)),
                           figures, verdicts, VIOLATED not in verdicts.values(), None, sure)

    def yardstick(self, among: Sequence[int]) -> int:
        """The best of the written strategies `among` (see the module docstring): the lowest
        objective; for a Pareto goal the lowest sum of ranks among them, then the lowest
        first objective, then file order. Never a sum of objectives in different units."""
        if not self.goal.pareto:
            return order(self.values, among)[0]
        among = list(among)
        ranks = rank_sums(self.goal, self.metrics[:, among], None if self.costs is None
                          else self.costs[:, among])
        first = estimates(self.goal.statistics[0], self.columns[0][:, among])
        return min(zip(ranks, first, among))[2]

    def objective_ci(self, k: int) -> tuple[float, float] | None:
        """The objective's 95% interval: its statistic's for one term; for a weighted sum
        the weighted sum of each term's interval at 1 - 0.05 / terms (Bonferroni); None for
        a Pareto goal (its value only orders the plans)."""
        if self.goal.pareto:
            return None
        alpha = (1 - CI_CONFIDENCE) / len(self.goal.terms)
        low = high = 0.0
        for (stat, weight), column in zip(self.goal.terms, self.columns):
            ci = interval(stat, column[:, k], 1 - alpha)
            if ci is None:
                return None
            ends = (weight * ci[0], weight * ci[1])
            low, high = low + min(ends), high + max(ends)
        return low, high

    def paired(self, k: int, best: int, best_name: str) -> Paired:
        """Plan k against plan `best` on the same worlds (see the module docstring)."""
        columns = {}
        for stat, column in zip(self.goal.statistics, self.columns):
            summary = paired_difference(column[:, k], column[:, best])
            columns[stat.column] = {key: summary.get(key) for key in PAIRED_KEYS}
        if self.goal.pareto:
            return Paired(best_name, Estimate(None, None), self.pareto_verdict(k, best), columns)
        ci = weighted_difference_interval(self.goal.terms, [c[:, k] for c in self.columns],
                                          [c[:, best] for c in self.columns], CI_CONFIDENCE)
        return Paired(best_name, Estimate(_finite(self.values[k] - self.values[best]), ci),
                      self.verdict(k, best, ci), columns)

    def verdict(self, k: int, best: int, ci: tuple[float, float] | None) -> str:
        """better / worse than `best` beyond noise, else within noise: the paired test for
        one statistic, the interval of the difference for a weighted sum."""
        if len(self.goal.terms) == 1:
            (stat, weight), column = self.goal.terms[0], self.columns[0]
            lower = lower_beyond_noise(stat, column[:, k], column[:, best])
            higher = lower_beyond_noise(stat, column[:, best], column[:, k])
            if weight < 0:
                lower, higher = higher, lower
            return BETTER if lower else WORSE if higher else WITHIN_NOISE
        if ci is None:
            return WITHIN_NOISE
        return BETTER if ci[1] < 0 else WORSE if ci[0] > 0 else WITHIN_NOISE

    def pareto_verdict(self, k: int, best: int) -> str:
        """better when plan k dominates `best` beyond noise, worse when dominated by it,
        n/a for a trade (each better on one objective), within noise otherwise."""
        values = np.array([estimates(stat, c) for stat, c in zip(self.goal.statistics,
                                                                  self.columns)])
        stats = self.goal.statistics
        if np.all(values[:, k] <= values[:, best]) and dominates(stats, self.columns, values, k,
                                                                  best):
            return BETTER
        if np.all(values[:, best] <= values[:, k]) and dominates(stats, self.columns, values,
                                                                  best, k):
            return WORSE
        if np.any(values[:, k] < values[:, best]) and np.any(values[:, best] < values[:, k]):
            return NOT_APPLICABLE
        return WITHIN_NOISE


PAIRED_KEYS = ("mean", "mean_ci", "p90", "p90_ci", "p_a_better", "p_a_worse")


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
