"""summary.json's job mix (issue 15 part 2): per strategy, each job column's mean, P50, P90,
P99 and P90 interval, and the top-level `jobs` block naming the classes and the columns.

A scenario with a job mix ([[demand.jobs]]) gets, after the metrics and the cost columns,
the columns definitions.job_columns(ids): `unservable_gpu_days` (demand that fitted in total
capacity but could not be packed into the islands, a job never spanning two) and
`homeless_days.<id>` per class in file order (days on which no island holds one job of the
class); docs/metrics.md defines both and the packing rule, core.labels holds each column's
unit and one-line meaning. The statistics are the metrics' own (statistics.metric_summary:
numpy's percentiles to the bit, the distribution-free P90 interval), taken from the run's
kept job columns [scenario, strategy, column] (SimulationResult.jobs). A run without a mix
has none of these keys.

The class ids, sizes and shares are the scenario's (JobMix.of_scenario; the plan holds the
numbers but not the ids), checked against the plan's column count where both meet
(check_job_columns), so the summary, metrics.parquet and the report agree.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .statistics import summarize_columns
from ..core.definitions import job_columns
from ..core.labels import meaning, unit

UNSERVABLE = "unservable_gpu_days"
HOMELESS_PREFIX = "homeless_days."
# Each job column's unit and what it counts: core.labels (docs/metrics.md defines them exactly).


@dataclass(frozen=True)
class JobMix:
    """A scenario's job mix as the plan compiled it: the class ids in file order, each
    class's size (H100-eq one job needs on one island) and share of demand, and the packing
    step (days) of unservable_gpu_days' midpoint rule."""
    ids: tuple[str, ...]
    sizes: tuple[float, ...]
    shares: tuple[float, ...]
    step_days: float

    @property
    def columns(self) -> tuple[str, ...]:
        """The job columns, in the order the kernels write them (definitions.job_columns)."""
        return job_columns(self.ids)

    @classmethod
    def of_scenario(cls, scenario) -> "JobMix | None":
        """The mix of a scenario's [demand] (model.Demand.jobs), None without one."""
        demand = scenario.demand
        jobs = demand.jobs
        if not jobs:
            return None
        return cls(ids=tuple(j.id for j in jobs), sizes=tuple(float(j.size) for j in jobs),
                   shares=tuple(float(j.share) for j in jobs),
                   step_days=float(demand.packing_step_days))


def scenario_job_columns(scenario) -> tuple[str, ...]:
    """The job columns a run of `scenario` writes after the cost columns; () without a mix
    or without a scenario."""
    mix = JobMix.of_scenario(scenario) if scenario is not None else None
    return mix.columns if mix is not None else ()


def check_job_columns(plan, columns: tuple[str, ...]) -> tuple[str, ...]:
    """`columns`, once they are known to name the plan's job columns one for one (a
    mismatch is a bug: the plan and the names come from one scenario)."""
    if len(columns) != plan.n_job_cols:
        raise ValueError(f"{len(columns)} job column names for a plan with "
                         f"{plan.n_job_cols} job columns (n_job_cols)")
    return columns


def summarize_jobs(jobs: np.ndarray, strategy_names: tuple[str, ...],
                   columns: tuple[str, ...]) -> dict:
    """{strategy: {job column: summary}} from jobs[scenario, strategy, column]: each summary
    is metric_summary's (mean, p50, p90, p99, p90_ci, with p90_ci_unavailable where there is
    no interval), one sort of one column's copy at a time."""
    return summarize_columns(jobs, strategy_names, columns, "job columns")


def jobs_block(mix: JobMix, horizon: float, start: float = 0.0) -> dict:
    """summary.json's top-level `jobs`: the classes (id, size in H100-eq, share of demand)
    in file order, the packing step, the window the columns count in ([start, horizon] days:
    start 0, or a status's as_of) and per column its unit and what it counts."""
    return {"classes": [{"id": i, "size": size, "share": share}
                        for i, size, share in zip(mix.ids, mix.sizes, mix.shares)],
            "packing_step_days": mix.step_days,
            "window_days": [float(start), float(horizon)],
            "columns": {c: {"unit": unit(c), "meaning": meaning(c)}
                        for c in mix.columns}}


def summary_keys(scenario, result, strategies: dict, horizon: float,
                 start: float = 0.0) -> dict:
    """Add each strategy's `jobs` to `strategies` (summary.json's, in place) and return the
    document's top-level keys: {"jobs": block} with a job mix, {} without (result.jobs None);
    the columns count [start, horizon] (start: 0, or a status's as_of)."""
    jobs = result.jobs
    mix = JobMix.of_scenario(scenario)
    if jobs is None or mix is None:
        return {}
    for name, per_column in summarize_jobs(jobs, result.plan.strategy_names,
                                           mix.columns).items():
        strategies[name]["jobs"] = per_column
    return {"jobs": jobs_block(mix, horizon, start)}
