"""What every layer agrees on: the metrics, the tolerance, the kinds of quantity and node,
and the two formulas the report shares with the kernels (demand and capacity-event size).

This module sits at the bottom of the house: it imports nothing from mcrisk, and everything
above it (the plan, the backends, results, report) takes these definitions from here rather
than from each other. docs/metrics.md defines the metrics in words. The CUDA kernels read the
same names from kernels/constants.cuh, which is generated from this module
(mcrisk.backends.cuda.constants_header): a column or a kind is a name everywhere, never a
number.
"""
from __future__ import annotations

import numpy as np

# The six per-scenario, per-strategy metrics, in the order of the metrics axis everywhere
# (kernel output, metrics.parquet columns, summary.json keys).
METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
           "completion_day", "power_violation")
N_METRICS = len(METRICS)
METRIC = {name: i for i, name in enumerate(METRICS)}  # column of each metric, 0 .. N_METRICS - 1
# Each metric's column by name, for code that reads or writes one metric (the name is the
# metric's, upper case: tests/core/test_constants.py holds every one to METRICS).
TROUGH_DEPTH = METRIC["trough_depth"]
TROUGH_DAYS = METRIC["trough_days"]
SHORTFALL_GPU_DAYS = METRIC["shortfall_gpu_days"]
HOMELESS_DAYS = METRIC["homeless_days"]
COMPLETION_DAY = METRIC["completion_day"]
POWER_VIOLATION = METRIC["power_violation"]

# Relative tolerance for "capacity below baseline" and "draw above cap": capacities are sums
# of floats (72 x 2.5 ...), so exact comparisons would turn rounding into phantom troughs.
REL_EPS = 1e-9
MAX_BURNIN_ATTEMPTS = 100_000   # a guard; validation rules out burn-ins that cannot pass

# The cost columns a scenario with a [costs] section adds after the metrics, in this order
# (kernel output, metrics.parquet, summary.json); cost_total is the sum of the others, added
# in this order. docs/costs.md defines each; the kernels compute them from the same node times
# as the metrics, over the same window [0, horizon].
COSTS = ("cost_total", "cost_power_reserved", "cost_power_over", "cost_energy",
         "cost_old_fleet", "cost_new_waiting", "cost_shortfall", "cost_crews",
         "cost_mitigation")
N_COSTS = len(COSTS)
COST = {name: i for i, name in enumerate(COSTS)}     # column of each cost, 0 .. N_COSTS - 1
# Each cost's column by name (the cost's name, upper case), counted from the first cost column:
# the metrics axis holds it at N_METRICS + COST_*, a run's costs array at COST_*.
COST_TOTAL = COST["cost_total"]
COST_POWER_RESERVED = COST["cost_power_reserved"]
COST_POWER_OVER = COST["cost_power_over"]
COST_ENERGY = COST["cost_energy"]
COST_OLD_FLEET = COST["cost_old_fleet"]
COST_NEW_WAITING = COST["cost_new_waiting"]
COST_SHORTFALL = COST["cost_shortfall"]
COST_CREWS = COST["cost_crews"]
COST_MITIGATION = COST["cost_mitigation"]
# The total comes first, and every backend adds the columns after it, in order.
assert COST_TOTAL == 0, "cost_total is the first cost column (the kernels sum the rest)"
COST_COMPONENTS = COSTS[COST_TOTAL + 1:]     # what cost_total adds, in that order

DAYS_PER_MONTH = 365.25 / 12     # a kW-month of reserved power is this many kW-days
HOURS_PER_DAY = 24.0

# Kinds of world quantity (see mcrisk/plan/compile.py): a draw, a sum of earlier quantities, the
# days a burn-in takes, and the attempts that burn-in needed (filled by the same step); then
# a unit's service age at its early failure (+inf: none), and per acceptance policy the days
# its extra soak adds and the days from its acceptance to its early failure.
Q_SAMPLE, Q_SUM, Q_BURNIN, Q_ATTEMPTS = 0, 1, 2, 3
Q_EARLY, Q_SOAK, Q_OUT = 4, 5, 6
# Quantities conditioned on a status (mcrisk/plan/conditioning.py): q_const minus earlier
# quantities (a duration fixed by a fact: the date's constant minus the other terms), and a
# draw of its distribution truncated to above q_const minus earlier quantities (a date not
# reached by the status date, an activity still running).
Q_REST, Q_ABOVE = 7, 8
# q_status of a BURNIN conditioned on a unit's burn-in so far (q_state: days so far, the
# attempt the loop resumes at, failures in a row, RMAs done; q_const: the elapsed days of the
# piece running at the status date): the next attempt starts afresh, or an attempt, a fix or
# an RMA is running; and of an EARLY conditioned on no early failure by the status date
# (q_state: the age it exceeds, the chance given that). 0: not conditioned.
BURNIN_FRESH, BURNIN_ATTEMPT, BURNIN_FIX, BURNIN_RMA = 1, 2, 3, 4
EARLY_SURVIVED = 1
# Kinds of plan node: a max-plus node, and a row retrofit that also waits for a free crew.
NODE_MAX, NODE_CREW = 0, 1


def demand_at(plan, t):
    """D(t): piecewise linear through the plan's demand points, flat outside them; for a
    forecast with an uncertain growth, the median curve (demand_p50; see demand_label)."""
    return np.interp(t, plan.demand_day, plan.demand_p50)


def demand_label(plan) -> str:
    """How a chart names demand_at's line: "demand", or "demand (P50)" where the demand
    points vary by scenario (a forecast with an uncertain growth)."""
    return "demand (P50)" if (np.asarray(plan.demand_growth_q) >= 0).any() else "demand"


def event_deltas(plan, world: np.ndarray) -> np.ndarray:
    """H100-eq each capacity event adds, per scenario: [n, k] (scaled by drawn performance)."""
    scale = np.where(plan.cap_event_scale_q >= 0, world[:, np.maximum(plan.cap_event_scale_q, 0)],
                     1.0)
    return plan.cap_event_delta * scale


# The job columns before the per-class ones (job_columns), and each job column's place counted
# from the first job column: unservable_gpu_days, then homeless_days.<id> of job class j at
# JOB_HOMELESS_DAYS + j.
JOB_MIX_COLUMNS = ("unservable_gpu_days",)
UNSERVABLE_GPU_DAYS = JOB_MIX_COLUMNS.index("unservable_gpu_days")
JOB_HOMELESS_DAYS = len(JOB_MIX_COLUMNS)


def job_columns(job_ids) -> tuple[str, ...]:
    """The columns a scenario with a job mix ([[demand.jobs]]) adds after the metrics and the
    cost columns, in this order: unservable_gpu_days (demand that fitted in total capacity
    but could not be packed into the islands, H100-eq-days), then homeless_days.<id> for every
    job class in file order (days on which no island could hold one job of the class).
    docs/metrics.md defines both."""
    return (*JOB_MIX_COLUMNS, *(f"homeless_days.{job}" for job in job_ids))
