"""The statistics a search scores plans by, their intervals, and elimination within noise.

Pure statistics, built on mcrisk.results' rules: arrays in, numbers and candidate indices
out; nothing here simulates, reads a file or formats a number. A search file names statistics
by label (mcrisk.optimize.space keeps them so): `p50:`, `p90:`, `p99:` of a metric or cost
column (numpy.quantile's default method, as summary.json), `mean:` (its mean) and `p:` (the
share of scenarios where the column is > 0, e.g. `p:power_violation`).

Noise, each time by the rule the rest of mcrisk already uses:

- an interval: a quantile's is the distribution-free order-statistic interval
  (mcrisk.results.statistics.quantile_ci), a mean's the normal one (mcrisk.results.compare.mean_ci),
  a share's the exact Clopper-Pearson interval (the binomial's beta quantiles);
- a constraint `stat <= max` is violated beyond noise when the statistic's 95% interval lies
  wholly above max (met when it lies wholly at or below, within noise otherwise); a share
  bounded by 0 ("in no world") is met when no world has it and violated when one has;
- candidate a is worse than candidate b beyond noise (paired: scenario i is the same world for
  both) when its estimate is higher and: for a quantile, the ranking's paired McNemar test at
  the pooled quantile says so, with the atom guard where the pooled quantile is an atom
  (mcrisk.results.pareto.p90_lower's rule, at any quantile); for a mean, the paired
  difference's interval (compare.mean_ci) lies wholly above 0; for a share, McNemar's exact
  test on the worlds where exactly one of the two is > 0. A weighted sum of statistics has no
  per-world value, so its difference's interval is the weighted sum of each term's interval
  (a mean's paired, a quantile's or share's from the two marginal intervals), each at
  1 - alpha / terms (Bonferroni): conservative, it never calls noise a difference.

`eliminate` applies these to one race stage: drop the candidates infeasible beyond noise;
single or weighted objective: keep the best `keep` fraction by the estimate and every
candidate not worse beyond noise than the worst kept one; Pareto: keep the candidates no other
dominates beyond noise (mcrisk.results.pareto's dominance) and the best by each objective.
Ties in every order are broken by candidate index, so the kept set is deterministic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..results.statistics import CI_CONFIDENCE, finite_mean, quantile_ci
from ..results.compare import mean_ci
from ..results.paired import mcnemar
from ..results.pareto import mean_lower
from ..results.pareto import quantile_lower as pareto_quantile_lower
from ..core.definitions import COST, COSTS, METRICS

QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99}
KINDS = (*QUANTILES, "mean", "p")
TEST_LEVEL = 0.05           # each paired test of the race (see eliminate)


@dataclass(frozen=True)
class Statistic:
    """One statistic of one column: kind in KINDS, column a METRICS or COSTS name."""

    kind: str
    column: str

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.column}"

    @property
    def is_cost(self) -> bool:
        return self.column in COSTS

    @property
    def quantile(self) -> float | None:
        return QUANTILES.get(self.kind)


def parse_statistic(label: str) -> Statistic:
    """The Statistic a label names ("p90:trough_depth"); ValueError saying what is wrong
    and what would be right (the search reader locates it in the file)."""
    kind, sep, column = str(label).partition(":")
    if not sep or kind not in KINDS:
        raise ValueError(f"not a statistic (write KIND:COLUMN with KIND one of "
                         f"{', '.join(KINDS)}, e.g. p90:trough_depth)")
    if column not in METRICS and column not in COSTS:
        raise ValueError(f"{column!r} is not a metric or cost column (one of "
                         f"{', '.join(METRICS + COSTS)})")
    return Statistic(kind, column)


def column_values(stat: Statistic, metrics: np.ndarray, costs: np.ndarray | None) -> np.ndarray:
    """The statistic's column from metrics[n, c, 6] and costs[n, c, 9] (or None): [n, c]."""
    if stat.is_cost:
        if costs is None:
            raise ValueError(f"{stat.label} needs cost columns and these results have none "
                             "(the scenario needs a [costs] section)")
        return costs[:, :, COST[stat.column]]
    return metrics[:, :, METRICS.index(stat.column)]


def estimate(stat: Statistic, values: np.ndarray) -> float:
    """The statistic of one candidate's values [n]; inf where it is not a finite number
    (so that it sorts last, as worst)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        if stat.kind == "mean":
            value = finite_mean(values)
        elif stat.kind == "p":
            value = float(np.count_nonzero(values > 0)) / values.size
        else:
            value = float(np.quantile(values, stat.quantile))
    return value if math.isfinite(value) else math.inf


def estimates(stat: Statistic, columns: np.ndarray) -> np.ndarray:
    """estimate of every candidate of columns[n, c]: [c]."""
    return np.array([estimate(stat, columns[:, c]) for c in range(columns.shape[1])])


def interval(stat: Statistic, values: np.ndarray,
             confidence: float = CI_CONFIDENCE) -> tuple[float, float] | None:
    """The statistic's two-sided interval from one candidate's values [n] (see the module
    docstring for which), or None where too few values give none."""
    values = np.asarray(values, dtype=np.float64)
    if stat.kind == "mean":
        return mean_ci(values, confidence)
    if stat.kind == "p":
        return share_ci(int(np.count_nonzero(values > 0)), values.size, confidence)
    return quantile_ci(values, stat.quantile, confidence)


def share_ci(k: int, n: int, confidence: float = CI_CONFIDENCE) -> tuple[float, float] | None:
    """Clopper-Pearson interval of a share of k in n (exact: the binomial's beta quantiles)."""
    from scipy import special
    if n < 1:
        return None
    tail = (1 - confidence) / 2
    low = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, tail))
    high = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - tail))
    return low, high


# Constraints ---------------------------------------------------------------------------------

MET, VIOLATED, WITHIN_NOISE = "met", "violated", "within noise"


def verdict(stat: Statistic, values: np.ndarray, maximum: float,
            confidence: float = CI_CONFIDENCE) -> str:
    """Whether `stat <= maximum` holds for one candidate's values: VIOLATED when the interval
    lies wholly above maximum (beyond noise), MET when wholly at or below it, else
    WITHIN_NOISE (also where too few values give no interval: nothing is beyond noise).

    A share bounded by 0 (`p:power_violation` at most 0) means "in no world": no interval of
    a share of 0 observed lies at or below 0 (its upper end is above 0 however many worlds
    ran), so that bound is judged on the worlds themselves: MET when none has the column
    above 0, VIOLATED when any has (one such world proves the share is above 0)."""
    if stat.kind == "p" and maximum == 0:
        return VIOLATED if np.any(np.asarray(values) > 0) else MET
    ci = interval(stat, values, confidence)
    if ci is None:
        return WITHIN_NOISE
    if ci[0] > maximum:
        return VIOLATED
    return MET if ci[1] <= maximum else WITHIN_NOISE


def evidence(stat: Statistic, values: np.ndarray, maximum: float,
             confidence: float = CI_CONFIDENCE) -> dict:
    """How sure the verdict on `stat <= maximum` is, from one candidate's values [n], for a
    quantile or a share (a mean's interval says it): `scenarios` (n); `over`, the worlds
    beyond what the constraint allows in one world (the column above `maximum` for a
    quantile, above 0 for a share); `over_upper`, an exact one-sided upper bound at
    `confidence` on the share of worlds over (Clopper-Pearson: with none of n over,
    1 - (1 - confidence) ** (1 / n), 1.5e-4 for 20,000: rarer than that cannot be ruled
    out); `allowed`, the share over the constraint allows (1 - q for the q-quantile,
    `maximum` for a share)."""
    values = np.asarray(values, dtype=np.float64)
    share = stat.kind == "p"
    over = int(np.count_nonzero(values > (0.0 if share else maximum)))
    return {"scenarios": int(values.size), "over": over,
            "over_upper": share_upper(over, int(values.size), confidence),
            "allowed": float(maximum) if share else 1 - stat.quantile}


def share_upper(k: int, n: int, confidence: float = CI_CONFIDENCE) -> float:
    """The exact one-sided upper bound at `confidence` on a share of k in n (the binomial's
    beta quantile); 1 where n is 0 or k is n."""
    from scipy import special

    if n < 1 or k >= n:
        return 1.0
    return float(special.betaincinv(k + 1, n - k, confidence))


def infeasible(constraints: Sequence, metrics: np.ndarray, costs: np.ndarray | None,
               confidence: float = CI_CONFIDENCE) -> np.ndarray:
    """bool[c]: which candidates violate some constraint beyond noise. `constraints`: objects
    with .statistic (a label) and .max (mcrisk.optimize.space.Constraint)."""
    out = np.zeros(metrics.shape[1], dtype=bool)
    for constraint in constraints:
        stat = parse_statistic(constraint.statistic)
        columns = column_values(stat, metrics, costs)
        for c in range(columns.shape[1]):
            if not out[c]:
                out[c] = verdict(stat, columns[:, c], constraint.max, confidence) == VIOLATED
    return out


# Paired comparisons --------------------------------------------------------------------------

def quantile_lower(a: np.ndarray, b: np.ndarray, q: float, level: float = TEST_LEVEL) -> bool:
    """Whether the q-quantile of a is below that of b beyond noise (paired), by
    mcrisk.results.pareto.quantile_lower: the estimates differ, McNemar at the pooled
    quantile says so at `level`, and at an atom the binomial guard agrees."""
    return pareto_quantile_lower(a, b, q, _quantile(a, q), _quantile(b, q), level)


def _quantile(values: np.ndarray, q: float) -> float:
    with np.errstate(invalid="ignore", over="ignore"):
        return float(np.quantile(values, q))


def share_lower(a: np.ndarray, b: np.ndarray, level: float = TEST_LEVEL) -> bool:
    """Whether the share of worlds where a > 0 is below b's beyond noise: McNemar's exact
    test on the worlds where exactly one of them is > 0."""
    on_a, on_b = a > 0, b > 0
    up, down = int(np.count_nonzero(~on_a & on_b)), int(np.count_nonzero(on_a & ~on_b))
    return up > down and mcnemar(up, down) < level


def lower_beyond_noise(stat: Statistic, a: np.ndarray, b: np.ndarray,
                       level: float = TEST_LEVEL) -> bool:
    """Whether statistic `stat` of a is below b's beyond noise (a and b paired by world)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if stat.kind == "mean":
        return estimate(stat, a) < estimate(stat, b) and mean_lower(a, b, level)
    if stat.kind == "p":
        return share_lower(a, b, level)
    return quantile_lower(a, b, stat.quantile, level)


def weighted_difference_interval(terms: Sequence[tuple[Statistic, float]],
                                 a: Sequence[np.ndarray], b: Sequence[np.ndarray],
                                 confidence: float = 1 - TEST_LEVEL
                                 ) -> tuple[float, float] | None:
    """An interval of sum_k w_k (stat_k(a) - stat_k(b)), a[k] and b[k] the columns of term k
    (paired by world), at `confidence` or more: each term's at 1 - (1 - confidence) / terms
    (Bonferroni); a mean's from the paired differences, a quantile's or share's from the two
    marginal intervals, each at 1 - (1 - confidence) / (2 terms). None where one is missing."""
    alpha = (1 - confidence) / len(terms)
    low = high = 0.0
    for (stat, weight), x, y in zip(terms, a, b):
        if stat.kind == "mean":
            ci = mean_ci(np.asarray(x, float) - np.asarray(y, float), 1 - alpha)
        else:
            cx, cy = interval(stat, x, 1 - alpha / 2), interval(stat, y, 1 - alpha / 2)
            ci = None if cx is None or cy is None else (cx[0] - cy[1], cx[1] - cy[0])
        if ci is None:
            return None
        ends = (weight * ci[0], weight * ci[1])
        low, high = low + min(ends), high + max(ends)
    return low, high


# The objective -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Goal:
    """An objective parsed: kind "minimize", "weights" or "pareto" (as
    mcrisk.optimize.space.Objective) and its terms as (Statistic, weight)."""

    kind: str
    terms: tuple[tuple[Statistic, float], ...]

    @property
    def pareto(self) -> bool:
        return self.kind == "pareto"

    @property
    def statistics(self) -> tuple[Statistic, ...]:
        return tuple(stat for stat, _ in self.terms)


def goal_of(objective) -> Goal:
    """The Goal of an objective with .kind and .terms ((label, weight), ...)."""
    return Goal(objective.kind, tuple((parse_statistic(label), float(weight))
                                      for label, weight in objective.terms))


def objective_values(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None) -> np.ndarray:
    """Each candidate's objective: the weighted sum of its terms' estimates, [c] (inf where
    not finite). For a Pareto goal the sum adds units that must not be added (dollars and
    H100-eq days): ordering_values orders its candidates instead."""
    total = np.zeros(metrics.shape[1])
    for stat, weight in goal.terms:
        total = total + weight * estimates(stat, column_values(stat, metrics, costs))
    return np.where(np.isfinite(total), total, np.inf)


def ordering_values(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None) -> np.ndarray:
    """What orders the candidates, lowest first, [c]: the objective, or for a Pareto goal
    the sum of the ranks on its objectives (rank_sums)."""
    return rank_sums(goal, metrics, costs) if goal.pareto else \
        objective_values(goal, metrics, costs)


def rank_sums(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None) -> np.ndarray:
    """Each candidate's ranks on the goal's statistics, summed, [c]: 1 for the lowest on a
    statistic (ties share the lower rank). Unit-free: it orders the candidates of a Pareto
    goal, whose objectives (dollars and H100-eq days, say) must never be added to each
    other; only their orders are."""
    from scipy.stats import rankdata

    total = np.zeros(metrics.shape[1])
    for stat in goal.statistics:
        total += rankdata(estimates(stat, column_values(stat, metrics, costs)), method="min")
    return total


def worse_beyond_noise(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None, a: int,
                       b: int, level: float = TEST_LEVEL) -> bool:
    """Whether candidate a's objective is worse (higher) than candidate b's beyond noise, on
    the same worlds (the columns of metrics[n, c, 6], costs[n, c, 9])."""
    columns = [column_values(stat, metrics, costs) for stat in goal.statistics]
    if len(goal.terms) == 1:
        stat, weight = goal.terms[0]
        x, y = columns[0][:, a], columns[0][:, b]
        return lower_beyond_noise(stat, y, x, level) if weight > 0 else (
            weight < 0 and lower_beyond_noise(stat, x, y, level))
    ci = weighted_difference_interval(goal.terms, [c[:, a] for c in columns],
                                      [c[:, b] for c in columns], 1 - level)
    return ci is not None and ci[0] > 0


def order(values: np.ndarray, among: Sequence[int]) -> list[int]:
    """The candidates `among`, best (lowest value) first, ties by candidate index."""
    return sorted(among, key=lambda c: (values[c], c))


# Elimination ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Elimination:
    """One stage's verdict: `kept` candidate indices best first (by the objective value, ties
    by index), `infeasible` those dropped as infeasible beyond noise (ascending), `values`
    every candidate's objective value [c]."""

    kept: tuple[int, ...]
    infeasible: tuple[int, ...]
    values: np.ndarray


def eliminate(goal: Goal, constraints: Sequence, metrics: np.ndarray,
              costs: np.ndarray | None, keep: float, level: float = TEST_LEVEL,
              final: bool = False) -> Elimination:
    """The candidates of one stage (the strategies axis of metrics[n, c, 6] and costs) that
    go on (see the module docstring). `keep` in (0, 1]: at least one candidate is kept when
    any is feasible. With `final` (the last stage), every feasible candidate is kept for a
    single or weighted goal (ranked), the Pareto set and the best by each objective for a
    Pareto one. Each paired test is at `level` (5%): a candidate truly as good as the worst
    kept one is dropped with probability at most `level` per stage."""
    bad = infeasible(constraints, metrics, costs)
    feasible = [c for c in range(metrics.shape[1]) if not bad[c]]
    values = objective_values(goal, metrics, costs)
    ranked = order(values, feasible)
    if goal.pareto:
        kept = set(pareto_set(goal, metrics, costs, feasible, level))
        kept |= {best_by(stat, metrics, costs, feasible) for stat in goal.statistics}
        kept.discard(None)
    elif final or not ranked:
        kept = set(ranked)
    else:
        count = max(1, math.ceil(keep * len(ranked) - 1e-9))
        kept = set(ranked[:count])
        worst = ranked[count - 1]
        kept |= {c for c in ranked[count:]
                 if not worse_beyond_noise(goal, metrics, costs, c, worst, level)}
    ordering = rank_sums(goal, metrics, costs) if goal.pareto else values
    return Elimination(tuple(order(ordering, kept)), tuple(c for c in range(len(bad)) if bad[c]),
                       values)


def best_by(stat: Statistic, metrics: np.ndarray, costs: np.ndarray | None,
            among: Sequence[int]) -> int | None:
    """The candidate of `among` with the lowest estimate of stat (ties by index)."""
    if not among:
        return None
    values = estimates(stat, column_values(stat, metrics, costs))
    return order(values, among)[0]


def pareto_set(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None,
               among: Sequence[int], level: float = TEST_LEVEL) -> list[int]:
    """The candidates of `among` that no other dominates beyond noise, ascending: a
    dominates b when a's estimate is no higher on every objective and lower beyond noise on
    one (mcrisk.results.pareto's rule). Each candidate is tested only against those whose
    estimates are no worse on every objective, the most dominant first, up to the first
    that dominates it (so a clear loser costs one test, not one per candidate)."""
    stats = goal.statistics
    return _pareto_among(stats, [column_values(stat, metrics, costs) for stat in stats], among,
                         level)


def _pareto_among(stats: Sequence[Statistic], columns: Sequence[np.ndarray],
                  among: Sequence[int], level: float) -> list[int]:
    """pareto_set's work on the objectives' columns ([n, c] each, in stats' order)."""
    values = np.array([estimates(stat, col) for stat, col in zip(stats, columns)])  # [k, c]
    among = np.array(sorted(among), dtype=np.int64)
    own = values[:, among]                                             # [k, m]
    no_worse = np.all(own[:, :, None] <= own[:, None, :], axis=0)      # [a, b]: a <= b on all
    np.fill_diagonal(no_worse, False)
    # the most dominant first: the fewest candidates below it, summed over the objectives
    score = np.sum(np.sum(own[:, None, :] < own[:, :, None], axis=2), axis=0)
    out = []
    for j, b in enumerate(among):
        rivals = sorted(np.flatnonzero(no_worse[:, j]), key=lambda i: (score[i], among[i]))
        if not any(dominates(stats, columns, values, int(among[i]), int(b), level)
                   for i in rivals):
            out.append(int(b))
    return out


def pareto_support(goal: Goal, metrics: np.ndarray, costs: np.ndarray | None,
                   among: Sequence[int], resamples: int, seed: int,
                   level: float = TEST_LEVEL) -> np.ndarray:
    """How sure each candidate of `among` is of its place on the noise-aware Pareto set, or
    off it: the share of `resamples` bootstrap resamples of the worlds (drawn with
    replacement, the same rows for every candidate: still paired) on which pareto_set puts
    it, [len(among)], in among's order. Near a tie the set's membership turns on a test at
    the edge of `level`, and another seed can flip it; a share near 1 (or 0) says it would
    not. Deterministic for a seed."""
    among = list(among)
    if not among:
        return np.zeros(0)
    stats = goal.statistics
    columns = [column_values(stat, metrics, costs)[:, among] for stat in stats]  # [n, m] each
    generator = np.random.default_rng(seed)
    counts = np.zeros(len(among))
    n = metrics.shape[0]
    for _ in range(resamples):
        rows = generator.integers(0, n, n)
        members = _pareto_among(stats, [column[rows] for column in columns], range(len(among)),
                                level)
        counts[members] += 1
    return counts / max(1, resamples)


def dominates(stats: Sequence[Statistic], columns: Sequence[np.ndarray], values: np.ndarray,
              a: int, b: int, level: float = TEST_LEVEL) -> bool:
    """Whether a is lower than b beyond noise on some objective (stats[k], its columns[k]
    [n, c] and estimates values[k, c]); the caller checks a is no higher on any."""
    return any(values[k, a] < values[k, b]
               and lower_beyond_noise(stat, columns[k][:, a], columns[k][:, b], level)
               for k, stat in enumerate(stats))
