"""aggregate.summarize's document computed in any array module: the summary of the GPU's
metrics without copying them to the host.

summarize_with(xp, metrics, names) with xp = cupy sorts and averages on the device and brings
back only the order statistics the percentiles and P90 intervals need; with xp = numpy it is
the same code on the host, which is how every CI run holds it to aggregate.summarize
(tests/test_gpu_parity.py). The interval's ranks are aggregate.quantile_ci_ranks, the one
rule of mcrisk. Like the rest of analysis/, it never simulates: it takes the metrics array.
"""
from __future__ import annotations

import numpy as np

from ..aggregate import (CONTINUOUS_METRICS, PERCENTILES, finite_or_none,
                         p90_ci_unavailable_reason, quantile_ci_ranks)


def quantile_position(n: int, q: float) -> tuple[int, int, float]:
    """(previous, next, gamma) of numpy.quantile's default 'linear' method for n values."""
    virtual = (n - 1) * q                       # numpy: (n - 1) * quantiles
    if virtual >= n - 1:                        # numpy: both neighbours are index -1, the
        return n - 1, n - 1, virtual - (-1)     # last value, and gamma is taken from -1
    previous = int(np.floor(virtual))
    return previous, previous + 1, virtual - previous


def lerp(a: float, b: float, t: float) -> float:
    """numpy's _lerp, the same operations in the same order (so the same float)."""
    a, b = np.float64(a), np.float64(b)
    diff_b_a = b - a
    if t >= 0.5:
        return float(b - diff_b_a * (1 - t))
    return float(a + diff_b_a * t)


def summarize_with(xp, metrics, strategy_names: tuple[str, ...]) -> dict:
    """aggregate.summarize's document from metrics[scenario, strategy, metric] in module xp.

    xp is numpy or cupy: sort and means run in xp (on the device for cupy); only the few
    order statistics that the percentiles and CIs need come back, and the interpolation runs
    on the host with numpy's formula, so percentiles and CIs equal aggregate.summarize's
    exactly (a device lerp could be contracted into an FMA). Means agree to rounding.
    """
    n = int(metrics.shape[0])
    if n < 1:
        raise ValueError("no scenarios to summarize")
    n_continuous = len(CONTINUOUS_METRICS)
    # [strategy, metric, scenario]: each row contiguous, sorted along the last axis.
    rows = xp.ascontiguousarray(xp.moveaxis(metrics[:, :, :n_continuous], 0, -1))
    means = _to_numpy(xp.mean(rows, axis=-1))
    ordered = xp.sort(rows, axis=-1)
    positions = {key: quantile_position(n, q) for key, q in PERCENTILES}
    ranks = quantile_ci_ranks(n, 0.9)                       # None: too few values
    wanted = sorted({0, n - 1} | {i for p in positions.values() for i in p[:2]}
                    | set(ranks or ()))
    column = {rank: j for j, rank in enumerate(wanted)}
    stats_ = _to_numpy(ordered[:, :, xp.asarray(wanted)])         # [strategy, metric, k]
    violations = _to_numpy(xp.count_nonzero(metrics[:, :, -1] > 0.5, axis=0))
    out = {}
    for s, name in enumerate(strategy_names):
        per = {}
        for m, metric in enumerate(CONTINUOUS_METRICS):
            values = stats_[s, m]
            summary = {"mean": float(means[s, m])}
            for key, (prev, nxt, gamma) in positions.items():
                summary[key] = lerp(values[column[prev]], values[column[nxt]], gamma)
            if np.isnan(values[column[n - 1]]):           # numpy: NaNs sort last, NaN out
                for key, _ in PERCENTILES:
                    summary[key] = float("nan")
            first, last = float(values[column[0]]), float(values[column[n - 1]])
            if ranks is None:                     # aggregate's convention: null, and why
                ci = None
            elif first == last:
                ci = [first, first]
            else:
                ci = [float(values[column[r]]) for r in ranks]
            summary = {key: finite_or_none(value) for key, value in summary.items()}
            if ci is not None and all(np.isfinite(ci)):
                summary["p90_ci"] = ci
            else:
                summary["p90_ci"] = None
                summary["p90_ci_unavailable"] = (p90_ci_unavailable_reason(n) or
                                                 "an end of the interval is not a finite number")
            per[metric] = summary
        per["power_violation"] = {"probability": int(violations[s]) / n}
        out[name] = per
    return out


def _to_numpy(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)
