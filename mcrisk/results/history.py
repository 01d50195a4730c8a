"""A run with a status: the history, [0, as_of), as facts, and summary.json's `status` block.

Every event before as_of is a fact, the same in every world conditioned on the status, so
what the metrics and costs count before as_of is known, not at risk: the application layer
measures it once (mcrisk.app.run.status_block), with the NumPy reference on the run's first
HISTORY_WORLDS worlds (its seed, scenarios 0, 1, ...) of mcrisk.plan.window.history_plan
(window [0, as_of), no one-off cost), and hands the metrics here. The run's own numbers count
the future, [as_of, horizon) (the plan's window_start).

A figure that still differs between those worlds is not a fact: it depends on a quantity the
status does not fix (a price drawn per world, a demand forecast's growth, a per-GPU
performance not measured). It is reported with `certain` false, its mean over the worlds
checked as `value` and their range, never as a fact (docs/metrics.md, Windows).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.definitions import COSTS, METRICS, N_METRICS
from ..core.model import Scenario
from ..core.status import Status
from ..plan.record import CompiledScenario
from ..plan.window import window_start
from . import facts
from .jobs import scenario_job_columns

HISTORY_WORLDS = 64
# The metrics with a history: power over cap and the completion day have none (power counts
# from as_of on; the completion day is a day of the plan, not a sum over time).
HISTORY_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days")


def figure(values: np.ndarray) -> dict:
    """A history figure from its value in each world checked: `certain` when every world
    agrees (then `value` is that value), else `value` is their mean; `min`, `max` always."""
    low, high = float(values.min()), float(values.max())
    certain = low == high
    value = low if certain else float(values.mean())
    return {"value": _finite(value), "certain": certain, "min": _finite(low),
            "max": _finite(high)}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def history_figures(plan: CompiledScenario, metrics: np.ndarray,
                    job_columns: tuple[str, ...] = ()) -> dict:
    """{strategy: {metric: figure, `costs`: {column: figure} (with costs), `jobs`: {column:
    figure} (with a job mix)}} from the history's metrics[world, strategy, column] (the
    metrics, cost and job columns of history_plan's worlds)."""
    out = {}
    for s, name in enumerate(plan.strategy_names):
        row = {m: figure(metrics[:, s, METRICS.index(m)]) for m in HISTORY_METRICS}
        if plan.n_costs:
            row["costs"] = {c: figure(metrics[:, s, N_METRICS + k])
                            for k, c in enumerate(COSTS[:plan.n_costs])}
        if plan.n_job_cols:
            first = N_METRICS + plan.n_costs
            row["jobs"] = {c: figure(metrics[:, s, first + k])
                           for k, c in enumerate(job_columns)}
        out[name] = row
    return out


def status_entry(scenario: Scenario, plan: CompiledScenario, status: Status,
                 history_metrics: np.ndarray) -> dict:
    """summary.json's `status` block (docs/metrics.md, summary.json): the status file (path,
    sha256), as_of (and its date), the future's window, what happened (`happened`, a line
    per kind of fact; `events`, the dated facts in order) and the history's figures per
    strategy from history_metrics[world, strategy, column], measured once."""
    start = scenario.start_date
    as_of = float(status.as_of)
    end = window_start(as_of, plan.horizon)
    worlds = int(history_metrics.shape[0])
    history = history_figures(plan, history_metrics, scenario_job_columns(scenario))
    every = [f for row in history.values() for f in _figures(row)]
    return {
        "path": status.path,
        "sha256": status.sha256,
        "as_of": as_of,
        "as_of_date": (status.as_of_date.isoformat() if status.as_of_date is not None
                       else facts.day_date(start, as_of)),
        "window_days": [end, float(plan.horizon)],
        "happened": facts.happened(scenario, status),
        "events": facts.events(status, start),
        "history": {"window_days": [0.0, end], "worlds": worlds,
                    "certain": all(f["certain"] for f in every),
                    "strategies": history},
    }


def _figures(row: dict):
    for key, value in row.items():
        if key in ("costs", "jobs"):
            yield from value.values()
        else:
            yield value


def same_for_every_strategy(history: dict) -> bool:
    """Whether every strategy has the same history figures (decisions already taken are
    facts, so they usually have: the outputs then show one row)."""
    rows = list(history.values())
    return all(row == rows[0] for row in rows[1:])
