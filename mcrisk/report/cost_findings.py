"""The cost findings (issue 13): the trade between trough and cost in one sentence per pair of
strategies that matters, and one sentence naming the frontier.

The pairs: neighbours on the frontier of P90 trough depth against mean cost (the dearer of
the two first), and the top-ranked strategy against the cheapest on average. Each sentence
says, for the same sampled worlds:

- what the first costs more or less than the second on average: the mean of the per-world
  difference with its paired 95% interval, and "no cost difference beyond noise" when that
  interval holds 0 (never a claim on a difference within noise);
- the two P90 trough depths, said to differ only when the ranking's paired test at the
  frontier's level says so (mcrisk.analysis.pareto.p90_lower);
- how much earlier or later the first completes at the median of the per-world difference
  (the paired median, never P50 minus P50), with its distribution-free 95% interval, or "no
  completion difference beyond noise";
- where either completes after the horizon in over 1% of scenarios, that costs count only to
  the horizon, so its cost is cut there.

Plain text; the HTML and Markdown writers escape it.
"""
from __future__ import annotations

import numpy as np

from ..aggregate import quantile_ci
from ..analysis.compare import paired_difference
from ..analysis.horizon import BEYOND_HORIZON_NOTABLE
from ..analysis.pareto import p90_lower, pair_test_level
from ..definitions import COST, METRICS
from .findings import fmt, share

_DEPTH, _COMPLETION = METRICS.index("trough_depth"), METRICS.index("completion_day")


def pairs_that_matter(report, ranking: list[str]) -> list[tuple[str, str]]:
    """(first, second) pairs: frontier neighbours, the dearer first; then the top-ranked
    strategy against the cheapest on average, when they differ and are not a pair already."""
    frontier = report.frontier()
    front = list(frontier.frontier)
    pairs = [(dear, cheap) for cheap, dear in zip(front, front[1:])]
    priced = {n: c for n, c in frontier.cost_values.items() if c is not None}
    if ranking and priced:
        top, cheapest = ranking[0], min(priced, key=lambda n: (priced[n], list(priced).index(n)))
        if top != cheapest and {top, cheapest} not in [set(p) for p in pairs]:
            pairs.append((top, cheapest))
    return pairs


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
    """'; costs count only to day 540, and X completes after it in 98.9% of scenarios, so
    its cost is cut there' for whichever of the two often completes after the horizon."""
    late = []
    for name, completion in zip(names, completions):
        count = int(np.count_nonzero(~(completion <= horizon)))
        if count > BEYOND_HORIZON_NOTABLE * completion.size:
            late.append(f"{name} completes after it in {share(count, completion.size)} of "
                        "scenarios")
    if not late:
        return ""
    whose = "its cost is" if len(late) == 1 else "their costs are"
    return (f"; costs count only to day {fmt(horizon)}, and {' and '.join(late)}, so {whose} "
            "cut there")


def trade_sentence(a: str, b: str, run, report) -> str:
    """One sentence on the trade between strategies a and b (see the module docstring)."""
    names = list(run.plan.strategy_names)
    sa, sb = names.index(a), names.index(b)
    metrics, costs = run.result.metrics, run.result.costs
    total = costs[:, :, COST["cost_total"]]
    frontier = report.frontier()
    level = pair_test_level(len(names))
    parts = [cost_clause(a, b, total[:, sa], total[:, sb], report.money),
             depth_clause(metrics[:, sa, _DEPTH], metrics[:, sb, _DEPTH],
                          frontier.risk_values[a], frontier.risk_values[b], level)]
    completion = completion_clause(metrics[:, sa, _COMPLETION], metrics[:, sb, _COMPLETION])
    text = ", ".join(parts + ([completion] if completion else []))
    text += horizon_clause((a, b), (metrics[:, sa, _COMPLETION], metrics[:, sb, _COMPLETION]),
                           report.horizon)
    return text + "."


def frontier_sentence(report) -> str:
    """The frontier of P90 trough depth against mean cost, cheapest first, and who is
    dominated by whom."""
    f = report.frontier()
    members = (f"{f.frontier[0]} alone" if len(f.frontier) == 1 else
               f"{', '.join(f.frontier)} (cheapest first)")
    text = f"On P90 trough depth against mean cost, the Pareto frontier is {members}"
    if not f.dominated:
        return text + "; no strategy is dominated beyond Monte Carlo noise."
    return text + "; dominated beyond Monte Carlo noise: " + "; ".join(
        f"{n} (by {_and(f.dominated_by[n])})" for n in f.dominated) + "."


def _and(names) -> str:
    """'a', 'a and b', 'a, b and c'."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def cost_findings(run, report) -> list[str]:
    """The cost findings of a RunResult with costs and its cost report (report.costs); none
    without a report."""
    if report is None:
        return []
    ranking = list(run.summary.get("ranking") or run.plan.strategy_names)
    return [frontier_sentence(report),
            *(trade_sentence(a, b, run, report) for a, b in pairs_that_matter(report, ranking))]
