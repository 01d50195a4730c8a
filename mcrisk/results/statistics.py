"""Summaries of results: percentiles over scenarios and a distribution-free CI of the P90.

quantile_ci_ranks is the one rule for the distribution-free interval of a quantile (binomial
order statistics, as scipy.stats.quantile_test): summary.json's p90_ci, the milestones'
intervals and the nightly's intervals.json all take their order statistics from it.

Every statistic here is finite or None: summary.json is strict JSON, so a statistic that
cannot be computed (an interval from too few scenarios, a mean that overflows) is null, never
NaN or Infinity.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import binomial
from ..core.definitions import METRIC, METRICS, POWER_VIOLATION
from .quantiles import lerp, order_statistics, quantile_position

PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
# All but power_violation (a probability), in METRICS order; METRIC[name] is each one's column.
CONTINUOUS_METRICS = tuple(m for m in METRICS if METRIC[m] != POWER_VIOLATION)
CI_CONFIDENCE = 0.95


@functools.lru_cache(maxsize=256)
def quantile_ci_ranks(n: int, q: float = 0.9,
                      confidence: float = CI_CONFIDENCE) -> tuple[int, int] | None:
    """0-based ranks (low, high) in the sorted values of the distribution-free two-sided
    interval of the q-quantile from n values, or None when n values are too few for it.

    The one rule every interval of a quantile in mcrisk uses (summary.json, milestones, the
    nightly's intervals.json, the GPU summary), the ranks scipy.stats.quantile_test's
    confidence_interval takes: with B ~ Binomial(n, q) the number of values below the true
    quantile and a = (1 - confidence) / 2, low + 1 = the smallest k with P(B <= k) >= a and
    high = the smallest k with P(B > k) <= a, so that [X(low), X(high)] misses the quantile
    below with probability under a and above with at most a. The lower end needs
    (1 - q)^n < a (low >= 0), the upper one q^n <= a (high < n): a 95% interval of the P90
    needs 36 values, of the P50 6, of the P99 368 (quantile_ci_min_samples). The ranks depend
    on n only, so they are computed once per n.
    """
    tail = (1 - confidence) / 2
    low = binomial.ppf(tail, n, q) - 1
    high = binomial.isf(tail, n, q)
    return (low, high) if 0 <= low and high < n else None


@functools.lru_cache(maxsize=None)
def quantile_ci_min_samples(q: float = 0.9, confidence: float = CI_CONFIDENCE) -> int:
    """The fewest values for which quantile_ci_ranks(n, q, confidence) exists (36 for a 95%
    interval of the P90); more values never lose it (both tail conditions only get easier)."""
    n = 1
    while quantile_ci_ranks(n, q, confidence) is None:
        n += 1
    return n


def quantile_ci(values: np.ndarray, q: float = 0.9,
                confidence: float = CI_CONFIDENCE) -> tuple[float, float] | None:
    """The distribution-free interval of the q-quantile of `values`: the two order statistics
    at quantile_ci_ranks (NaN sorts last, as in numpy.sort), or None when there are too few
    values for it to exist."""
    values = np.asarray(values, dtype=np.float64)
    ranks = quantile_ci_ranks(values.size, q, confidence)
    if ranks is None:
        return None
    low, high = ranks
    ordered = np.partition(values, [low, high])
    return (float(ordered[low]), float(ordered[high]))


def p90_ci_min_samples(confidence: float = CI_CONFIDENCE, q: float = 0.9) -> int:
    """The fewest scenarios for which a P90 interval exists (quantile_ci_min_samples): 36 for
    95%, since 0.9^35 = 0.0250 > 0.025 >= 0.9^36 = 0.0225."""
    return quantile_ci_min_samples(q, confidence)


def p90_ci_unavailable_reason(n: int, confidence: float = CI_CONFIDENCE) -> str | None:
    """Why a P90 interval cannot be given for n scenarios, or None when it can."""
    needed = p90_ci_min_samples(confidence)
    if n >= needed:
        return None
    return (f"too few scenarios: a {confidence:.0%} interval of the P90 needs at least "
            f"{needed}, this run has {n}")


def p90_confidence_interval(values: np.ndarray,
                            confidence: float = CI_CONFIDENCE) -> tuple[float, float] | None:
    """Distribution-free CI of the P90 from binomial order statistics (quantile_ci); None when
    there are too few values for it to exist (see p90_ci_min_samples)."""
    return quantile_ci(values, 0.9, confidence)


def finite_or_none(value: float) -> float | None:
    """value as a float, or None when it is NaN or infinite (strict JSON has neither)."""
    value = float(value)
    return value if math.isfinite(value) else None


def finite_mean(values: np.ndarray) -> float:
    """The mean, also where the plain sum overflows (values near the float64 maximum): the
    mean of finite values is finite, so it is then taken over values scaled by the largest."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = float(np.mean(values))
        if not math.isfinite(mean) and np.all(np.isfinite(values)):
            scale = float(np.max(np.abs(values)))
            mean = float(np.mean(values / scale)) * scale
    return mean


def summary_ranks(n: int) -> list[int]:
    """The 0-based ranks, ascending, of the order statistics a summary of n values reads:
    the first and last, the neighbours of every percentile, the P90 interval's ends."""
    positions = [quantile_position(n, q)[:2] for _, q in PERCENTILES]
    return sorted({0, n - 1} | {i for pair in positions for i in pair}
                  | set(quantile_ci_ranks(n, 0.9) or ()))


def summary_of_order_statistics(at: dict[int, float], n: int, mean: float) -> dict:
    """mean, p50, p90, p99 (numpy.quantile's default method) and p90_ci of n values, from
    their order statistics at summary_ranks(n) (`at`: rank -> value, NaN sorting last).

    The one formula of every metric summary (metric_summary, hence summarize): the percentiles interpolate as numpy.quantile does, to the
    bit; a statistic that is not finite is None; a p90_ci that does not exist is None and
    `p90_ci_unavailable` says why."""
    summary = {"mean": mean}
    with np.errstate(over="ignore", invalid="ignore"):      # inf - inf: NaN, as numpy's
        for key, q in PERCENTILES:
            previous, following, gamma = quantile_position(n, q)
            summary[key] = lerp(at[previous], at[following], gamma)
    if math.isnan(at[n - 1]):                   # numpy: a NaN (sorted last) makes every
        for key, _ in PERCENTILES:              # quantile NaN
            summary[key] = math.nan
    summary = {key: finite_or_none(value) for key, value in summary.items()}
    ranks = quantile_ci_ranks(n, 0.9)
    ci = None if ranks is None else [float(at[rank]) for rank in ranks]
    if ci is not None and all(math.isfinite(end) for end in ci):
        summary["p90_ci"] = ci
    else:
        summary["p90_ci"] = None
        summary["p90_ci_unavailable"] = (p90_ci_unavailable_reason(n)
                                         or "an end of the interval is not a finite number")
    return summary


def metric_summary(values: np.ndarray, overwrite: bool = False) -> dict:
    """mean, p50, p90, p99 (numpy.quantile's default method) and p90_ci of one metric, all
    from one sorted copy of the values (summary_of_order_statistics); with `overwrite`, the
    values themselves are sorted (a caller's array it no longer needs in its order: no copy).
    Performance: from core.tasks.COMPILED_FROM values on, the order statistics are read
    without a sort (quantiles.order_statistics: the same values), and `overwrite` leaves the
    values as they are.

    A statistic that is not finite (from infinite or NaN values) is None; a p90_ci that does
    not exist is None and `p90_ci_unavailable` says why.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size < 1:
        raise ValueError("no values to summarize")
    mean = finite_mean(values)                  # in scenario order, before any sort
    ranks = summary_ranks(values.size)
    at = dict(zip(ranks, order_statistics(values, ranks, overwrite=overwrite)))
    return summary_of_order_statistics(at, values.size, mean)


def summarize_columns(values: np.ndarray, strategy_names: tuple[str, ...], columns,
                      noun: str) -> dict:
    """{strategy: {column: summary}} from values[scenario, strategy, column] (the cost or
    job columns that ride after the metrics), each metric_summary's, one sort of one
    column's copy at a time; a ValueError naming `noun` when the shape does not match."""
    if values.ndim != 3 or values.shape[1:] != (len(strategy_names), len(columns)):
        raise ValueError(f"{noun} of shape {values.shape}: expected [scenarios, "
                         f"{len(strategy_names)} strategies, {len(columns)} {noun}]")
    return {name: {column: metric_summary(values[:, s, k]) for k, column in enumerate(columns)}
            for s, name in enumerate(strategy_names)}


def summarize(metrics: np.ndarray, strategy_names: tuple[str, ...]) -> dict:
    """{strategy: {metric: summary}} from metrics[scenario, strategy, metric].

    One sort per metric and strategy: each column is sorted once, as a copy of that column
    alone (metric_summary), so a summary needs memory for one column, not a sorted copy of
    the whole array (2 GB at 10^7 scenarios x 5 strategies)."""
    out = {}
    for s, name in enumerate(strategy_names):
        per = {m: metric_summary(metrics[:, s, METRIC[m]]) for m in CONTINUOUS_METRICS}
        per["power_violation"] = {"probability": float(np.mean(metrics[:, s, POWER_VIOLATION]
                                                               > 0.5))}
        out[name] = per
    return out
