"""Aggregation: percentiles over scenarios, a distribution-free CI of the P90, and ranking."""
from __future__ import annotations

import numpy as np
from scipy import stats

from .compile import METRICS

PERCENTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
CONTINUOUS_METRICS = METRICS[:-1]           # all but power_violation (a probability)
RANK_KEYS = ("trough_depth", "trough_days", "shortfall_gpu_days")


def p90_confidence_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free CI of the P90 from binomial order statistics (scipy quantile_test)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return (float("nan"), float("nan"))
    if values.min() == values.max():
        return (float(values[0]), float(values[0]))
    ci = stats.quantile_test(values, q=float(np.quantile(values, 0.9)), p=0.9)
    low, high = ci.confidence_interval(confidence_level=confidence)
    return (float(low), float(high))


def metric_summary(values: np.ndarray) -> dict:
    """mean, p50, p90, p99 (numpy.quantile's default method) and p90_ci of one metric."""
    summary = {"mean": float(np.mean(values))}
    for key, q in PERCENTILES:
        summary[key] = float(np.quantile(values, q))
    summary["p90_ci"] = list(p90_confidence_interval(values))
    return summary


def summarize(metrics: np.ndarray, strategy_names: tuple[str, ...]) -> dict:
    """{strategy: {metric: summary}} from metrics[scenario, strategy, metric]."""
    out = {}
    for s, name in enumerate(strategy_names):
        per = {m: metric_summary(metrics[:, s, k]) for k, m in enumerate(CONTINUOUS_METRICS)}
        per["power_violation"] = {"probability": float(np.mean(metrics[:, s, -1] > 0.5))}
        out[name] = per
    return out


def rank(summary: dict) -> list[str]:
    """Strategies best first: P90 trough depth, then P90 trough days, then P90 shortfall."""
    return sorted(summary, key=lambda name: tuple(summary[name][k]["p90"] for k in RANK_KEYS))
