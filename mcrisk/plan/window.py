"""The windows of a migration in flight: what the metrics and costs count, with a status.

Without a status every metric and cost counts [0, horizon) (docs/metrics.md). With one, as of
day a, the run's numbers are about the future, [a, horizon): the plan's `window_start` is a
(held to [0, horizon]), and every backend counts trough depth and days, shortfall, homeless
days, the job columns and every cost from it; power over cap counts the draw in force at a and
every later one; the baseline stays the capacity at day 0 and the completion day stays a day
of the plan. The history, [0, a), is the same in every world conditioned on the status (every
event before a is a fact): `history_plan` is the plan that measures it, once
(mcrisk.results.history).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..core.status import Status
from .record import CompiledScenario


def window_start(as_of: float | None, horizon: float) -> float:
    """The future window's first day: 0 without a status (as_of None), else as_of held to
    [0, horizon] (a status dated after the horizon leaves an empty future)."""
    if as_of is None:
        return 0.0
    return float(min(max(float(as_of), 0.0), float(horizon)))


def as_of_of(status: Status | float | None) -> float | None:
    """A status's as_of (a Status, a day, or None: no status)."""
    if status is None or isinstance(status, (int, float)):
        return None if status is None else float(status)
    return float(status.as_of)


def with_window(plan: CompiledScenario, status: Status | float | None) -> CompiledScenario:
    """`plan` counting its metrics and costs over the future, [as_of, horizon): the plan
    itself without a status (nothing changes), else a copy with window_start = as_of."""
    start = window_start(as_of_of(status), plan.horizon)
    if start == plan.window_start:
        return plan
    return dataclasses.replace(plan, window_start=start)


def history_plan(plan: CompiledScenario, status: Status | float) -> CompiledScenario:
    """`plan` measuring the history, [0, as_of): window_start 0, the horizon at as_of (held to
    [0, horizon]) and no one-off cost. A one-off (a mitigation's cost) has no date: it is
    counted with the future, never as spent (docs/metrics.md, Windows). Node times do not
    depend on the horizon, so this plan's worlds and schedules are the run's."""
    end = window_start(as_of_of(status), plan.horizon)
    return dataclasses.replace(plan, window_start=0.0, horizon=end,
                               lump_amount=np.zeros_like(plan.lump_amount))
