"""The cost findings (issue 13): the trade between trough and cost in one sentence per pair of
strategies that matters, and one sentence naming the frontier.

The pairs: neighbours on the frontier of P90 trough depth against mean cost (the dearer of
the two first); the top-ranked strategy against the cheapest on average; and the top-ranked
strategy against every strategy whose P90 trough depth the ranking's own test cannot tell
from its own (on the reference, hybrid-gated is the frontier alone and the cheapest, and
swing-gated, as deep at P90, trades cost for completion with it). Each sentence says, for the
same sampled worlds:

- what the first costs more or less than the second on average: the mean of the per-world
  difference with its paired 95% interval, and "no cost difference beyond noise" when that
  interval holds 0 (never a claim on a difference within noise);
- the two P90 trough depths, said to differ only when the ranking's paired test at the
  frontier's level says so (mcrisk.results.pareto.p90_lower);
- how much earlier or later the first completes at the median of the per-world difference
  (the paired median, never P50 minus P50), with its distribution-free 95% interval, or "no
  completion difference beyond noise";
- where either completes after the horizon in over 1% of scenarios, that costs count only to
  the horizon, so its costs are cut there.

Plain text; the HTML and Markdown writers escape it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ...results.statistics import quantile_ci
from ...results.compare import paired_difference
from ...results.horizon import BEYOND_HORIZON_NOTABLE
from ...results.pareto import p90_estimate, p90_lower, pair_test_level
from ...results.ranking import per_test_alpha
from ...core.definitions import COMPLETION_DAY, COST_TOTAL, TROUGH_DEPTH
from .sentences import fmt, share



def pairs_that_matter(report, ranking: list[str],
                      tied: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(first, second) pairs: frontier neighbours, the dearer first; then the top-ranked
    strategy against the cheapest on average, and against each strategy in `tied` (those its
    P90 trough depth cannot be told from: depth_ties), each when not a pair already."""
    frontier = report.frontier()
    front = list(frontier.frontier)
    pairs = [(dear, cheap) for cheap, dear in zip(front, front[1:])]
    if not ranking:
        return pairs
    top = ranking[0]
    priced = {n: c for n, c in frontier.cost_values.items() if c is not None}
    cheapest = [min(priced, key=lambda n: (priced[n], list(priced).index(n)))] if priced else []
    for other in [*cheapest, *tied]:
        if other != top and {top, other} not in [set(p) for p in pairs]:
            pairs.append((top, other))
    return pairs


def depth_ties(run, ranking: list[str]) -> list[str]:
    """The strategies (ranking order) whose P90 trough depth the ranking's own test (its
    paired test at its level, summary.json's ranking_rule.test_alpha) cannot tell from the
    top-ranked one's: a trade of cost against completion at the same depth, which the
    frontier alone leaves unsaid when the top one is also the cheapest."""
    names = list(run.plan.strategy_names)
    if not ranking or ranking[0] not in names:
        return []
    rule = run.summary.get("ranking_rule") or {}
    level = rule.get("test_alpha") or per_test_alpha(len(names))
    depth = {n: run.result.metrics[:, s, TROUGH_DEPTH] for s, n in enumerate(names)}
    p90 = {n: p90_estimate(values) for n, values in depth.items()}
    top = ranking[0]

    def tie(name: str) -> bool:
        return (p90[top] is not None and p90[name] is not None
                and not p90_lower(depth[top], depth[name], p90[top], p90[name], level)
                and not p90_lower(depth[name], depth[top], p90[name], p90[top], level))

    return [name for name in ranking[1:] if name in depth and tie(name)]


def _signed_interval(ci, sign: float, money) -> str:
    """'$1.6M to $2.6M' of an interval of a difference, turned by `sign` (-1: of its
    negative, for a difference said as 'less' or 'earlier')."""
    low, high = sorted((sign * ci[0], sign * ci[1]))
    return f"{money(low)} to {money(high)}"


def cost_clause(a: str, b: str, total_a: np.ndarray, total_b: np.ndarray, money) -> str:
    """What a costs more or less than b on average, paired, or that it is within noise."""
    d = paired_difference(total_a, total_b)
    ci, mean = d.get("mean_ci"), d["mean"]
    if ci is not None and mean is not None and (ci[0] > 0 or ci[1] < 0):
        sign = 1.0 if mean > 0 else -1.0
        return (f"{a} costs {money(abs(mean))} {'more' if sign > 0 else 'less'} than {b} on "
                f"average (paired 95% interval {_signed_interval(ci, sign, money)})")
    interval = (f"paired 95% interval {money(ci[0])} to {money(ci[1])}" if ci is not None
                else "too few scenarios for an interval")
    return (f"{a} and {b} show no cost difference beyond noise ({a} minus {b}: "
            f"{money(mean)} on average, {interval})")


def depth_clause(depth_a: np.ndarray, depth_b: np.ndarray, p90_a, p90_b, level: float) -> str:
    """The two P90 trough depths, said to differ only beyond noise."""
    if p90_a is not None and p90_a == p90_b:
        return f"with the same P90 trough depth ({fmt(p90_a)} H100-eq)"
    if p90_lower(depth_a, depth_b, p90_a, p90_b, level):
        return f"for a P90 trough depth of {fmt(p90_a)} against {fmt(p90_b)} H100-eq"
    if p90_lower(depth_b, depth_a, p90_b, p90_a, level):
        return f"with a P90 trough depth of {fmt(p90_a)} against {fmt(p90_b)} H100-eq"
    return (f"with P90 trough depths of {fmt(p90_a)} and {fmt(p90_b)} H100-eq (no difference "
            "beyond noise)")


def completion_clause(completion_a: np.ndarray, completion_b: np.ndarray) -> str:
    """How much earlier or later the first completes at the median of the per-world
    difference, with its 95% interval; empty when that median is not a finite number."""
    with np.errstate(invalid="ignore"):
        diff = np.asarray(completion_a, dtype=np.float64) - completion_b
    if np.isnan(diff).any():
        return ""
    median = float(np.median(diff))
    if not np.isfinite(median):
        return ""
    ci = quantile_ci(diff, 0.5)
    if ci is None or not (ci[0] > 0 or ci[1] < 0) or median == 0:
        return (f"and no completion difference beyond noise (median of the per-world "
                f"difference {fmt(median)} days)")
    sign = 1.0 if median > 0 else -1.0
    low, high = sorted((sign * ci[0], sign * ci[1]))
    return (f"and completes {fmt(abs(median))} days {'later' if sign > 0 else 'earlier'} at "
            f"the median of the per-world difference (95% interval {fmt(low)} to {fmt(high)} "
            "days)")


def horizon_clause(names: tuple[str, str], completions: tuple[np.ndarray, np.ndarray],
                   horizon: float) -> str:
    """'; X completes after the 540-day horizon in 98.9% of scenarios (and Y in 1.2%), and
    costs count only to the horizon, so its (their) costs are cut there', for whichever of the
    two completes after the horizon in over 1% of scenarios; empty when neither does."""
    late = []
    for name, completion in zip(names, completions):
        count = int(np.count_nonzero(~(completion <= horizon)))
        if count > BEYOND_HORIZON_NOTABLE * completion.size:
            late.append((name, share(count, completion.size)))
    if not late:
        return ""
    (first, first_share), rest = late[0], late[1:]
    text = (f"; {first} completes after the {fmt(horizon)}-day horizon in {first_share} of "
            "scenarios")
    text += "".join(f" and {name} in {part}" for name, part in rest)
    return text + (", and costs count only to the horizon, so "
                   f"{'their' if rest else 'its'} costs are cut there")


def trade_sentence(a: str, b: str, run, report) -> str:
    """One sentence on the trade between strategies a and b (see the module docstring)."""
    names = list(run.plan.strategy_names)
    sa, sb = names.index(a), names.index(b)
    metrics, costs = run.result.metrics, run.result.costs
    total = costs[:, :, COST_TOTAL]
    frontier = report.frontier()
    level = pair_test_level(len(names))
    parts = [cost_clause(a, b, total[:, sa], total[:, sb], report.money),
             depth_clause(metrics[:, sa, TROUGH_DEPTH], metrics[:, sb, TROUGH_DEPTH],
                          frontier.risk_values[a], frontier.risk_values[b], level)]
    completion = completion_clause(metrics[:, sa, COMPLETION_DAY], metrics[:, sb, COMPLETION_DAY])
    text = ", ".join(parts + ([completion] if completion else []))
    text += horizon_clause((a, b), (metrics[:, sa, COMPLETION_DAY], metrics[:, sb, COMPLETION_DAY]),
                           report.horizon)
    return text + "."


def frontier_sentence(report) -> str:
    """The frontier of P90 trough depth against mean cost, cheapest first, and who is
    dominated by whom (both in ranking order)."""
    f = report.frontier()
    members = (f"{f.frontier[0]} alone" if len(f.frontier) == 1 else
               f"{', '.join(f.frontier)} (cheapest first)")
    text = f"On P90 trough depth against mean cost, the Pareto frontier is {members}"
    if not f.dominated:
        return text + "; no strategy is dominated beyond Monte Carlo noise."
    return text + "; dominated beyond Monte Carlo noise: " + "; ".join(
        f"{n} (by {_and(report.ranked(f.dominated_by[n]))})"
        for n in report.ranked(f.dominated)) + "."


def _and(names) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def cost_findings(run, report) -> list[str]:
    """The cost findings of a RunResult with costs and its cost report (html.costs); none
    without a report."""
    if report is None:
        return []
    ranking = list(run.summary.get("ranking") or run.plan.strategy_names)
    pairs = pairs_that_matter(report, ranking, depth_ties(run, ranking))
    return [frontier_sentence(report), *(trade_sentence(a, b, run, report) for a, b in pairs)]
