"""Each night's intervals, for comparing two nights unpaired (different seeds or sample
counts, or a night without metrics.parquet).

Per strategy and metric: n, mean, standard deviation and the distribution-free 95% interval
of P50, P90 and P99 (results.statistics.quantile_ci, the rule summary.json's p90_ci uses),
and the power count. Every nightly run writes them as intervals.json (a few kB), so that a
night whose metrics.parquet --keep-large deleted can still be compared on every statistic; a
night with neither offers only its summary.json's P90 intervals and power probabilities
(intervals_from_summary).
"""
from __future__ import annotations

import math

import numpy as np

from ...results.statistics import finite_or_none, quantile_ci
from ...core.definitions import METRICS, POWER_VIOLATION
from ..text import visible

INTERVALS_FILE = "intervals.json"
INTERVALS_SCHEMA = 1
LEVELS = {"p50": 0.5, "p90": 0.9, "p99": 0.99}      # the quantiles compared, by statistic


def is_number(value) -> bool:
    """An int or float of a JSON document (a bool is not a number)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def metric_intervals(values: np.ndarray) -> dict:
    """What an unpaired comparison needs of one metric's values: n, mean, standard deviation
    (ddof 1) and the 95% interval of P50, P90 and P99 (null where it does not exist)."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    with np.errstate(over="ignore", invalid="ignore"):
        out = {"n": n, "mean": finite_or_none(np.mean(values)) if n else None,
               "std": finite_or_none(np.std(values, ddof=1)) if n > 1 else None}
    for stat, level in LEVELS.items():
        ci = quantile_ci(values, level) if n else None
        out[f"{stat}_ci"] = (list(ci) if ci is not None and all(math.isfinite(end) for end in ci)
                             else None)
    return out


def night_intervals(per_strategy: dict[str, np.ndarray], extras: tuple[str, ...] = ()) -> dict:
    """{strategy: {metric: metric_intervals, power_violation: {n, count}}} from each
    strategy's values[scenario, column] (METRICS in order, then the `extras` columns: cost
    and job columns, intervals like a metric's)."""
    out = {}
    columns = (*METRICS, *extras)
    for name, values in per_strategy.items():
        per = {metric: metric_intervals(values[:, k]) for k, metric in enumerate(columns)
               if k != POWER_VIOLATION and k < values.shape[1]}
        power = values[:, POWER_VIOLATION]
        per["power_violation"] = {"n": int(power.size), "count": int(np.sum(power > 0.5))}
        out[name] = per
    return out


def intervals_document(metrics: np.ndarray, strategy_names,
                       extras: dict[str, np.ndarray] | None = None) -> dict:
    """intervals.json of a run: night_intervals of metrics[scenario, strategy, metric] and of
    each extra column (cost and job columns: {name: values[scenario, strategy]}).

    Written by every nightly run (a few kB), so that a night whose metrics.parquet has been
    deleted can still be compared with, unpaired, on every statistic."""
    extras = extras or {}
    columns = [metrics[:, :, :len(METRICS)], *(v[:, :, None] for v in extras.values())]
    values = np.concatenate(columns, axis=2)
    return {"schema": INTERVALS_SCHEMA, "samples": int(metrics.shape[0]),
            "strategies": night_intervals({name: values[:, s, :]
                                           for s, name in enumerate(strategy_names)},
                                          tuple(extras))}


def intervals_from_summary(summary: dict) -> dict:
    """What summary.json alone offers: the P90 intervals and the power probabilities."""
    n = summary["samples"]
    out = {}
    for name, metrics in summary["strategies"].items():
        per = {}
        for metric in METRICS:
            found = metrics[metric]
            if metric == "power_violation":
                probability = found.get("probability")
                per[metric] = {"n": n, "count": None if not is_number(probability)
                               else int(round(probability * n))}
                continue
            ci = found.get("p90_ci")
            ok = isinstance(ci, list) and len(ci) == 2 and all(is_number(e) for e in ci)
            per[metric] = {"n": n, "mean": None, "std": None, "p50_ci": None,
                           "p90_ci": ci if ok else None, "p99_ci": None}
        out[name] = per
    return out


def _interval_ok(value) -> bool:
    return value is None or (isinstance(value, list) and len(value) == 2
                             and all(is_number(e) and math.isfinite(e) for e in value))


def intervals_problem(document, summary: dict) -> str | None:
    """What in an intervals.json does not hold what mcrisk writes there, or None."""
    if not isinstance(document, dict) or document.get("schema") != INTERVALS_SCHEMA:
        return f"not an intervals document of schema {INTERVALS_SCHEMA}"
    strategies = document.get("strategies")
    if not isinstance(strategies, dict):
        return "strategies is missing"
    for name in summary["strategies"]:
        per = strategies.get(name)
        if not isinstance(per, dict):
            return f"no intervals for strategy {visible(name)!r}"
        for metric in METRICS:
            found = per.get(metric)
            if not isinstance(found, dict) or not is_number(found.get("n")):
                return f"strategies.{visible(name)}.{metric} is missing"
            if metric == "power_violation":
                if not is_number(found.get("count")):
                    return f"strategies.{visible(name)}.{metric}.count is missing"
                continue
            if not all(found.get(k) is None or is_number(found.get(k)) for k in ("mean", "std")) \
                    or not all(_interval_ok(found.get(f"{s}_ci")) for s in LEVELS):
                return f"strategies.{visible(name)}.{metric} is not a set of intervals"
    return None
