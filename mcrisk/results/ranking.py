"""Ranking the strategies without ranking Monte Carlo noise.

Criteria, in order: the P90 of trough_depth, trough_days, shortfall_gpu_days, then
homeless_days (RANK_KEYS); lower is better. Every strategy plays the same sampled worlds, so
whether two strategies' P90s differ is decided by a paired test on those worlds
(mcrisk.results.paired.paired_quantile_test: McNemar at the pooled P90), not by overlapping
marginal intervals.

The procedure, deterministic for given values:

1. Start with every strategy in one group, in the scenario file's order, at the first
   criterion.
2. Within a group, sort by the criterion's P90 (equal P90s in file order); a strategy whose
   P90 is not a finite number (null in summary.json) goes after every one that has one, in
   file order. Walk the sorted neighbours: a pair is split only when its P90s differ AND the
   paired test says so (p below the per-test level, with the crossings going the way the P90s
   do). Equal P90s are a tie without a test. Where the pooled P90 is an atom (a value that
   several worlds share exactly, such as a trough depth of the whole baseline), the paired
   test compares how often each strategy reaches that value, which can differ while both
   P90s are that value (13% of worlds at the atom for one, all of them for the other); there
   the split also needs `atom_check`: one-sided binomial tests that at a threshold c between
   the two P90s the better strategy is at or above c in under 10% of worlds and the worse in
   over 10% (an intersection-union test, at the same level). Ties chain: A tied with B and B with C keep
   A, B and C together even where A and C alone would differ (conservative).
3. Each resulting subgroup goes on to the next criterion (step 2 again, within it).
4. Strategies still together after the last criterion are tied on every criterion: they share
   a rank (competition ranking: 1, 1, 3) and are listed in the file's order.

Error rate: the per-test level is FAMILY_ALPHA divided by (criteria x strategy pairs), a
Bonferroni bound over every test the procedure could make. So the probability that the
ranking separates any two strategies on a criterion where their true P90s are equal is at most
FAMILY_ALPHA (5%), to the accuracy of the test itself (exact when the two strategies' values
are exchangeable world by world, large-sample otherwise).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from . import binomial
from ..core.definitions import METRICS
from ..core.labels import label
from .paired import paired_quantile_test, pooled_quantile
from .quantiles import linear_quantile

RANK_KEYS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days")
FAMILY_ALPHA = 0.05
RANK_QUANTILE = 0.9


def per_test_alpha(strategies: int, criteria: int = len(RANK_KEYS),
               family_alpha: float = FAMILY_ALPHA) -> float:
    """The per-test significance level: family_alpha over every (criterion, pair) the
    procedure could test (Bonferroni), so the family-wise error is at most family_alpha."""
    tests = criteria * strategies * (strategies - 1) // 2
    return family_alpha / max(1, tests)


def atom_check(lower: np.ndarray, upper: np.ndarray, threshold: float, level: float,
               q: float = RANK_QUANTILE) -> bool:
    """Whether the q-quantile (by default RANK_QUANTILE) of `lower` is below that of `upper`
    beyond noise, as seen at `threshold` (between the two sampled quantiles): `lower` is at or
    above it in less than 1 - q of the worlds (10% for the P90) and `upper` in more, each by a
    one-sided exact binomial test at `level`. If the true quantile of `lower` is not below that of `upper`, one of the two
    nulls holds at every threshold, so the pair of tests rejects with probability <= level
    (intersection-union). Valid with atoms, where the paired test at the pooled quantile
    is not; it does not use the pairing, so it serves only as a guard there."""
    tail = 1.0 - q
    n = lower.size
    below = binomial.test_less(int(np.count_nonzero(lower >= threshold)), n, tail)
    above = binomial.test_greater(int(np.count_nonzero(upper >= threshold)), n, tail)
    return bool(below < level and above < level)


def _p90(values: np.ndarray) -> float | None:
    with np.errstate(invalid="ignore", over="ignore"):
        value = linear_quantile(values, RANK_QUANTILE)     # numpy.quantile's, unsorted
    return value if math.isfinite(value) else None


def rank_strategies(values: np.ndarray, names: Sequence[str],
                    criteria: Sequence[str] = RANK_KEYS,
                    family_alpha: float = FAMILY_ALPHA,
                    columns: Sequence[int] | None = None,
                    p90s: Sequence[Sequence[float | None]] | None = None) -> dict:
    """Rank strategies from per-scenario values[scenario, strategy, criterion] (criterion in
    the order of `criteria`, or at values[:, :, columns[k]] when `columns` is given, so that a
    run's whole metrics array is read in place, without a copy; scenario i is the same world
    for every strategy). p90s[s][k], when given, is strategy s's P90 on criterion k as
    numpy.quantile gives it (None when not finite), from a summary that has it already.

    Returns {"ranking": names best first (ties in file order),
             "ranks": {name: {"rank", "tied_with", "decided_by"}},
             "rule": {"criteria", "quantile", "test", "family_alpha", "test_alpha"}}.
    decided_by is the criterion that separated the strategy's tie group from the group ranked
    just above it (for the first group: just below); None when no criterion separates any
    strategies (one group).
    """
    values = np.asarray(values, dtype=np.float64)
    count = len(names)
    if columns is None:                 # then values holds one column per criterion
        columns = range(values.shape[2]) if values.ndim == 3 else ()
    columns = list(columns)
    if (values.ndim != 3 or values.shape[1] != count or len(columns) != len(criteria)
            or not all(0 <= c < values.shape[2] for c in columns)):
        raise ValueError(f"values must be [scenario, {count} strategies, one column per "
                         f"criterion of {list(criteria)}], got shape {values.shape}")

    def column(s: int, k: int) -> np.ndarray:
        return values[:, s, columns[k]]

    level = per_test_alpha(count, len(criteria), family_alpha)
    p90 = ([list(row) for row in p90s] if p90s is not None else
           [[_p90(column(s, k)) for k in range(len(criteria))] for s in range(count)])

    def differ(a: int, b: int, k: int) -> bool:
        """Whether b's P90 on criterion k is beyond noise above a's (p90[a] < p90[b])."""
        if p90[a][k] == p90[b][k]:
            return False
        x, y = column(a, k), column(b, k)
        pooled = pooled_quantile(x, y, RANK_QUANTILE)
        p_value, direction = paired_quantile_test(x, y, RANK_QUANTILE, pooled)
        if direction != 1 or not p_value < level:
            return False
        if np.count_nonzero(x == pooled) + np.count_nonzero(y == pooled) > 1:   # an atom
            return atom_check(x, y, (p90[a][k] + p90[b][k]) / 2, level)
        return True

    def split(group: list[int], k: int) -> list[list[int]]:
        known = sorted((s for s in group if p90[s][k] is not None), key=lambda s: (p90[s][k], s))
        missing = [s for s in group if p90[s][k] is None]
        parts: list[list[int]] = []
        for s in known:
            if parts and not differ(parts[-1][-1], s, k):
                parts[-1].append(s)
            else:
                parts.append([s])
        return parts + ([missing] if missing else [])

    def order(group: list[int], k: int) -> list[tuple[tuple[int, ...], list[int]]]:
        """[(path, members)]: path[i] is the subgroup's position at criterion i."""
        if k == len(criteria) or len(group) == 1:
            return [((), sorted(group))]
        out = []
        for i, part in enumerate(split(group, k)):
            out += [((i, *path), members) for path, members in order(part, k + 1)]
        return out

    groups = order(list(range(count)), 0) if count else []

    def separating(first: tuple[int, ...], second: tuple[int, ...]) -> str:
        return criteria[next(i for i, (x, y) in enumerate(zip(first, second)) if x != y)]

    ranking: list[str] = []
    ranks: dict[str, dict] = {}
    for g, (path, members) in enumerate(groups):
        if g > 0:
            decided = separating(groups[g - 1][0], path)
        elif len(groups) > 1:
            decided = separating(path, groups[1][0])
        else:
            decided = None
        position = len(ranking) + 1
        for s in members:
            ranks[names[s]] = {"rank": position,
                               "tied_with": [names[t] for t in members if t != s],
                               "decided_by": decided}
        ranking += [names[s] for s in members]
    rule = {"criteria": list(criteria), "quantile": RANK_QUANTILE,
            "test": "paired McNemar at the pooled P90 (> and >= forms, Bonferroni x2); at an "
                    "atom also one-sided binomial tests of the share at or above a threshold "
                    "between the P90s (intersection-union)",
            "family_alpha": family_alpha, "test_alpha": level}
    return {"ranking": ranking, "ranks": ranks, "rule": rule}


def rank_label(entry: dict) -> str:
    """'3' or, for a strategy that shares its rank, '3='."""
    return f"{entry['rank']}{'=' if entry['tied_with'] else ''}"


def rule_text(rule: dict) -> str:
    """The ranking rule and its error rate in one paragraph of plain text."""
    names = [f"P90 {label(c)}" for c in rule["criteria"]]
    order = ", then ".join(names)
    return (f"Best first by {order}. Two strategies are told apart on a criterion only when "
            "a paired test on the same sampled worlds (McNemar at their pooled P90) finds "
            f"their P90s different at p < {rule['test_alpha']:.3g} (where several worlds share "
            "the P90 value exactly, binomial tests of the share of worlds at or above a "
            "threshold between the P90s must agree): at most a "
            f"{rule['family_alpha']:.0%} chance, over every criterion and pair, of separating "
            "any two strategies whose P90s are truly equal (Bonferroni). Otherwise they are "
            "tied on it (equal P90s without a test; ties chain) and the next criterion decides. "
            "Strategies tied on every criterion share a rank, shown as 3=, in the scenario "
            "file's order.")


def rank(metrics: np.ndarray, strategy_names: tuple[str, ...],
         summary: dict | None = None) -> dict:
    """Strategies best first from metrics[scenario, strategy, metric], treating differences
    within Monte Carlo noise as ties (the module docstring: P90 trough depth, then trough
    days, then shortfall, then homeless days, each judged by a paired test on the same worlds).

    Returns {"ranking": [names], "ranks": {name: {rank, tied_with, decided_by}}, "rule": {...}}.
    A P90 that is not finite sorts last; strategies tied on every criterion share a rank and
    keep the scenario file's order. With `summary` (summarize's document of these metrics)
    the P90s are read from it instead of being taken again (one sort per metric)."""
    p90s = None
    if summary is not None:
        p90s = [[summary[name][key]["p90"] for key in RANK_KEYS] for name in strategy_names]
    return rank_strategies(metrics, tuple(strategy_names), RANK_KEYS,
                           columns=[METRICS.index(key) for key in RANK_KEYS], p90s=p90s)
