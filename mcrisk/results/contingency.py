"""Contingent strategies in figures: how often each branch is taken, the metrics by branch,
and the value of flexibility (the contingent plan against each of its fixed branches).

A contingent strategy follows, world by world, the branch its decision takes
(mcrisk/backends/contingency.py); the run keeps which (`branches`, bool[samples,
contingencies]: the met branch). Its branches are strategies of the same run, simulated on the
same worlds, so contingent - branch is a paired difference: zero in the worlds taking that
branch, the gain or loss of switching in the others. Flexibility is said to pay (or to cost)
only where the 95% interval of the mean difference excludes 0 (as mitigation's verdicts).
"""
from __future__ import annotations

import numpy as np

from ..core.definitions import COST_TOTAL, COSTS, METRICS
from .binomial import proportion_interval
from .compare import COMPARE_METRICS, paired_difference
from .statistics import metric_summary

BRANCH_KEYS = ("met", "unmet")


def flexibility_verdict(d: dict) -> str:
    """better / worse / within_noise / same, of contingent - fixed (lower is better for
    every metric and cost): a claim only where the 95% interval of the mean excludes 0."""
    if d["p_equal"] == 1.0:
        return "same"
    ci = d.get("mean_ci")
    if ci is None:
        return "within_noise"
    if ci[1] < 0:
        return "better"
    if ci[0] > 0:
        return "worse"
    return "within_noise"


def contingent_block(plan, metrics: np.ndarray, costs: np.ndarray | None,
                     branches: np.ndarray) -> dict:
    """summary.json's `contingent`: {strategy: entry} for each contingent strategy of `plan`,
    from metrics[samples, strategies, metrics], costs[samples, strategies, n_costs] or None,
    and branches[samples, contingencies] (True: met)."""
    names = plan.strategy_names
    return {names[c.row]: _entry(plan, c, metrics, costs, branches[:, k])
            for k, c in enumerate(plan.contingencies)}


def _entry(plan, c, metrics, costs, met: np.ndarray) -> dict:
    names = plan.strategy_names
    n = int(met.shape[0])
    branches = []
    for key, row, where in (("met", c.met_row, met), ("unmet", c.unmet_row, ~met)):
        worlds = int(where.sum())
        branches.append({
            "branch": key, "strategy": names[row], "worlds": worlds, "share": worlds / n,
            "share_ci": list(proportion_interval(worlds, n)),
            "metrics": ({m: _brief(metrics[where, c.row, METRICS.index(m)])
                         for m in COMPARE_METRICS} if worlds else None),
            **({"cost_total": _brief(costs[where, c.row, COST_TOTAL]) if worlds else None}
               if costs is not None else {})})
    return {
        "decision": {"day": c.day, "at_least": c.at_least,
                     "events": [plan.node_names[v] for v in c.event_nodes]},
        "branches": branches,
        "flexibility": {names[row]: _flexibility(metrics, costs, c.row, row)
                        for row in (c.met_row, c.unmet_row)},
    }


def _brief(values: np.ndarray) -> dict:
    """mean, P50 and P90 of one metric over the worlds taking a branch."""
    s = metric_summary(values)
    return {"mean": s["mean"], "p50": s["p50"], "p90": s["p90"]}


def _flexibility(metrics, costs, row: int, fixed: int) -> dict:
    """{metric (and cost_total): paired difference contingent - fixed, with its verdict}."""
    out = {}
    columns = [(m, metrics[:, row, METRICS.index(m)], metrics[:, fixed, METRICS.index(m)])
               for m in COMPARE_METRICS]
    if costs is not None:
        columns.append((COSTS[COST_TOTAL], costs[:, row, COST_TOTAL],
                        costs[:, fixed, COST_TOTAL]))
    for name, a, b in columns:
        d = paired_difference(a, b)
        d["verdict"] = flexibility_verdict(d)
        out[name] = d
    return out
