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

from ..core import labels
from ..core.definitions import COST_TOTAL, COSTS, METRICS
from ..core.labels import label
from .binomial import proportion_interval
from .compare import COMPARE_METRICS, paired_difference
from .mitigation import MATERIALITY_FLOORS
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
        "decision": {"day": None if c.on_node >= 0 else c.day, "at_least": c.at_least,
                     "events": [plan.node_names[v] for v in c.event_nodes],
                     **({"on": plan.node_names[c.on_node]} if c.on_node >= 0 else {})},
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


# The branch table's columns: what a planner reads first (P90s of the ranking's criteria,
# the mean cost with [costs]), each as (key in `metrics`, or cost_total, and statistic).
BRANCH_COLUMNS = (("trough_depth", "p90"), ("trough_days", "p90"),
                  ("shortfall_gpu_days", "p90"), ("completion_day", "p50"))


def branch_rows(name: str, entry: dict) -> list[dict]:
    """One row per branch of contingent strategy `name`: `branch`, `strategy`, `worlds`,
    `share` and `share_ci`, and `cells`, (column, statistic, value) in BRANCH_COLUMNS order,
    then cost_total's mean where the run has costs (a value None where no world takes it)."""
    rows = []
    for b in entry["branches"]:
        cells = [(m, stat, b["metrics"][m][stat] if b["metrics"] else None)
                 for m, stat in BRANCH_COLUMNS]
        if "cost_total" in b:
            cells.append(("cost_total", "mean", b["cost_total"]["mean"]
                          if b["cost_total"] else None))
        rows.append({"strategy": b["strategy"], "branch": b["branch"], "worlds": b["worlds"],
                     "share": b["share"], "share_ci": b["share_ci"], "cells": cells})
    return rows


def cell_heading(column: str, statistic: str) -> str:
    """A branch table's heading for a cell of branch_rows: 'trough depth (H100-eq) P90',
    'total cost mean'."""
    words = "total cost" if column == "cost_total" else label(column)
    return f"{words} {statistic.upper() if statistic != 'mean' else 'mean'}"


def cell_text(column: str, value: float | None, money, missing: str = "-") -> str:
    """A branch table's cell of branch_rows: `missing` where no world takes the branch, a
    cost through `money` (results.compare.money_text of the currency), else the number."""
    if value is None:
        return missing
    if column == "cost_total" and money is not None:
        return money(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def moment_text(decision: dict) -> str:
    """When a decision (summary.json's `decision`) is taken: 'on day 150' or 'when shipment
    S3 arrives' (its event's milestone name)."""
    if decision.get("on"):
        return f"when {decision['on']}"
    return f"on day {_num(decision['day'])}"


def condition_text(decision: dict) -> str:
    """A decision's condition in words: 'hall B energized' for one event, 'all of A, B' when
    it needs every one, else 'at least 8 of 16 events (N01 accepted .. N16 accepted)'."""
    events, at_least = decision["events"], decision["at_least"]
    if len(events) == 1:
        return events[0]
    if at_least == len(events) and len(events) <= 3:
        return "all of " + events_text(events)
    return f"at least {at_least} of {events_text(events)}"


def events_text(events: list[str]) -> str:
    """The events a decision counts, in words: all of a few, or the first and last of many."""
    if len(events) <= 3:
        return ", ".join(events)
    return f"{len(events)} events ({events[0]} .. {events[-1]})"


def flexibility_sentences(contingent: dict, money=None) -> list[str]:
    """The value of flexibility in words, per contingent strategy and fixed branch: a claim
    (lower, higher) only where the 95% interval of the mean difference excludes 0 and the
    mean is at least the nightly's materiality floor (one unit of the metric, as the value of
    mitigation's); the rest named once, as within Monte Carlo noise or below materiality.
    `money(value)` writes a cost (default: a number)."""
    sentences, noise, small = [], [], []
    for name, entry in contingent.items():
        moment = moment_text(entry["decision"])
        for fixed, per_metric in entry["flexibility"].items():
            lower, higher = [], []
            for column, d in per_metric.items():
                words = _words(column)
                if d["verdict"] == "within_noise":
                    noise.append(f"{name} against {fixed}: {words}")
                if d["verdict"] not in ("better", "worse"):
                    continue
                if abs(d["mean"]) < MATERIALITY_FLOORS.get(column, 0.0):
                    small.append(f"{name} against {fixed}: {words}")
                    continue
                low, high = d["mean_ci"] if d["verdict"] == "worse" else (-d["mean_ci"][1],
                                                                           -d["mean_ci"][0])
                (lower if d["verdict"] == "better" else higher).append(
                    f"its mean {words} by {_amount(column, abs(d['mean']), money)} "
                    f"[95% CI {_amount(column, low, money, unit=False)}, "
                    f"{_amount(column, high, money, unit=False)}]")
            if lower or higher:
                parts = ([f"lowers {_join(lower)}"] if lower else []) + (
                    [f"raises {_join(higher)}"] if higher else [])
                sentences.append(f"Deciding {moment} rather than always following {fixed}, "
                                 f"{name} " + "; it ".join(parts) + " (on the same worlds).")
    if noise:
        sentences.append("No claim where the 95% interval of the mean difference contains 0 "
                         f"(within Monte Carlo noise): {', '.join(noise)}.")
    if small:
        sentences.append("No claim where the mean difference, beyond noise, is below the "
                         f"materiality floor of one unit of the metric: {', '.join(small)}.")
    return sentences


def _words(column: str) -> str:
    return "total cost" if column == "cost_total" else label(column)


def _amount(column: str, value: float, money, unit: bool = True) -> str:
    if column == "cost_total" and money is not None:
        return money(value)
    return f"{_num(value)} {labels.unit(column)}" if unit else _num(value)


def _num(value: float) -> str:
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 1 else f"{value:,.2g}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
