"""The words every finding shares: numbers as prose shows them, counts and shares, and the
paired difference of two strategies on the same worlds, claimed only beyond noise."""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import METRICS, REL_EPS


def fmt(value: float) -> str:
    """A number for prose and tables: thousands separators, 1 decimal below 100."""
    if value is None or value != value:       # null in summary.json, or NaN
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        text = f"{value:,.0f}"
    else:
        text = f"{value:,.1f}"
    return text[1:] if text in ("-0", "-0.0") else text    # -0.0, or a rounding to 0: "0"


def floor_shown(value: float) -> float:
    """`value` rounded down to what fmt shows (a whole number from 100 up, else 0.1), so that
    "at least fmt(floor_shown(v))" is true of v. A value a float rounding below a shown step
    (2047.9999999999998) counts as that step."""
    value = float(value) + REL_EPS * max(abs(float(value)), 1.0)
    if value >= 100:
        return float(math.floor(value))
    return math.floor(value * 10) / 10


def share(count: int, total: int) -> str:
    """count / total as a percentage that never rounds a part to 0% or 100%."""
    if total <= 0:
        return "n/a"
    p = 100.0 * count / total
    if 0 < count < total:
        if p < 0.1:
            return "under 0.1%"
        if p > 99.9:
            return "over 99.9%"
    return f"{p:.1f}%"


def _count(count: int, total: int, noun: str = "scenarios", extra: str = "") -> str:
    """'19,998 of 20,000 scenarios (over 99.9%)', 'all 20,000 scenarios'; `extra` goes
    into the parentheses."""
    if count == total:
        return f"all {total:,} {noun}" + (f" ({extra})" if extra else "")
    return f"{count:,} of {total:,} {noun} ({share(count, total)}{'; ' + extra if extra else ''})"


def _and(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _column(metrics: np.ndarray, names, strategy: str, metric: str) -> np.ndarray:
    return metrics[:, list(names).index(strategy), METRICS.index(metric)]


def _paired(a: np.ndarray, b: np.ndarray) -> dict:
    from ...results.compare import paired_difference
    return paired_difference(a, b)


def _interval(ci) -> str:
    return f"95% CI {fmt(ci[0])} to {fmt(ci[1])}"


def _of_size(d: dict) -> tuple[float, float]:
    """A paired difference's 95% interval for the size of its mean, the way the sentence
    states it ("larger by 155", not "by -155"): negated and swapped when the mean is < 0."""
    low, high = d["mean_ci"]
    return (low, high) if d["mean"] >= 0 else (-high, -low)


def _beyond_noise(d: dict) -> bool:
    """Whether a paired mean difference is beyond Monte Carlo noise: its 95% interval
    exists and excludes 0."""
    ci = d.get("mean_ci")
    return ci is not None and (ci[0] > 0 or ci[1] < 0)
