"""The drivers in words: which metric a strategy's drivers explain and why, each driver's
unit, and the sentence of its strongest drivers, ranked by |rank correlation| with the sign
said, with a word where a sign runs against the obvious direction (a later date going with a
lower trough), which the run's correlations do not explain.
"""
from __future__ import annotations

import math

from ...core.labels import label
from ...results.drivers import driver_unit

DRIVER_Z = 3.0      # a driver is named when |rank corr| x sqrt(n - 1) exceeds this
DRIVEN = ("trough_days", "shortfall_gpu_days")      # what the drivers explain, in this order
SENTENCE_TOP = 3


def driver_metric(per_metric: dict) -> str | None:
    """The metric a strategy's drivers explain: its trough days (how long capacity stays
    below the baseline) where they vary, else its shortfall (a strategy that never dips
    below the baseline); None when neither varies."""
    return next((m for m in DRIVEN if per_metric.get(m)), None)


def driver_reason(metric: str | None) -> str:
    """Why the drivers explain `metric` (driver_metric's rule, in words)."""
    if metric == "trough_days":
        return "trough days: the first of trough days and shortfall that varies"
    if metric == "shortfall_gpu_days":
        return "shortfall: its trough days do not vary"
    return "no metric varies"


def against_intuition(d: dict) -> bool:
    """Whether a driver's sign runs against the obvious: a delay, a date or a duration (an
    input in days) that goes with a lower metric (every driven metric is worse higher)."""
    return driver_unit(d["input"]) == "days" and d["spearman"] < 0


def _named(d: dict, metric_words: str) -> str:
    base = d["label"][:-1] + "; " if d["label"].endswith(")") else d["label"] + " ("
    return (base + f"rank correlation {d['spearman']:+.2f}: higher "
            f"{d['label'].split(' (')[0]} goes with "
            f"{'higher' if d['spearman'] > 0 else 'lower'} {metric_words})")


def driven_by(summary: dict, name: str) -> str:
    """' Its trough days (...) move most with X (rank correlation -0.75: higher X goes with
    lower trough days), then Y (...).' from the run's drivers: the strongest by |rank
    correlation|, either sign, beyond noise; '' when none is."""
    drivers = summary.get("drivers", {})
    used = drivers.get("scenarios", 0)
    if used < 2:
        return ""
    per_metric = drivers.get("strategies", {}).get(name, {})
    metric = driver_metric(per_metric)
    if metric is None:
        return ""
    found = sorted((d for d in per_metric[metric]
                    if abs(d["spearman"]) * math.sqrt(used - 1) > DRIVER_Z),
                   key=lambda d: -abs(d["spearman"]))[:SENTENCE_TOP]
    if not found:
        return ""
    words = label(metric)
    text = (f" Its {words} (what its drivers explain: {driver_reason(metric)}) move most with "
            + ", then ".join(_named(d, words) for d in found) + ".")
    odd = [d["label"].split(" (")[0] for d in found if against_intuition(d)]
    if odd:
        text += (f" That a larger {' or a larger '.join(odd)} goes with lower {words} runs "
                 "against intuition; this run does not show why (a rank correlation is not a "
                 "mechanism: the milestones and the Gantt chart show which dates move).")
    return text
