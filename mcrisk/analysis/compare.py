"""Paired comparison of two strategies on common random numbers.

Scenario i is the same world for every strategy, so A_i - B_i isolates the effect of the
plan: its spread is what the plans differ by, not how the worlds differ. That makes the
intervals much tighter than comparing two independent runs.
"""
from __future__ import annotations

import numpy as np

from ..aggregate import finite_mean, finite_or_none, metric_summary
from ..definitions import METRICS

COMPARE_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                   "completion_day")


MEAN_CI_MIN_SAMPLES = 2         # a spread, and so an interval, needs two values


def mean_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float] | None:
    """Normal-approximation CI of the mean (n is in the thousands here); None below
    MEAN_CI_MIN_SAMPLES values, or where it is not finite."""
    from scipy import stats
    n = values.shape[0]
    if n < MEAN_CI_MIN_SAMPLES:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        mean = finite_mean(values)
        half = stats.norm.ppf(0.5 + confidence / 2) * values.std(ddof=1) / np.sqrt(n)
        ends = (finite_or_none(mean - half), finite_or_none(mean + half))
    return None if None in ends else ends


def paired_difference(a: np.ndarray, b: np.ndarray) -> dict:
    """Summary of a - b per scenario: mean (with CI), P50/P90/P99 (P90 with its order-
    statistic CI), and the probabilities that a is worse (larger), equal, or better. An
    interval that does not exist is None, with `<name>_unavailable` saying why."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    ci = mean_ci(diff)
    shares = {"p_a_worse": float(np.mean(diff > 0)), "p_equal": float(np.mean(diff == 0)),
              "p_a_better": float(np.mean(diff < 0))}
    summary = metric_summary(diff, overwrite=True)      # sorts diff: its order is done with
    summary["mean_ci"] = None if ci is None else list(ci)
    if ci is None:
        summary["mean_ci_unavailable"] = (
            f"too few scenarios: an interval of the mean needs at least {MEAN_CI_MIN_SAMPLES}"
            if diff.shape[0] < MEAN_CI_MIN_SAMPLES else "the interval is not a finite number")
    return {**summary, **shares}


def compare_strategies(metrics: np.ndarray, strategy_names, a: str, b: str,
                       which=COMPARE_METRICS) -> dict:
    """{metric: paired_difference} of strategy a against strategy b."""
    sa, sb = strategy_names.index(a), strategy_names.index(b)
    return {m: paired_difference(metrics[:, sa, METRICS.index(m)],
                                 metrics[:, sb, METRICS.index(m)]) for m in which}


def against_leader(metrics: np.ndarray, strategy_names, ranking: list[str]) -> dict:
    """Every other strategy against the top-ranked one: {strategy: {metric: summary}}."""
    leader = ranking[0]
    return {"leader": leader,
            "strategies": {name: compare_strategies(metrics, list(strategy_names), name, leader)
                           for name in ranking[1:]}}
