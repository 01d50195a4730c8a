"""Stop on precision, the statistics: when is every reported P90 known well enough, and how
many scenarios to try next. (The loop that simulates until then is mcrisk.app.precision.)

The target is met when, for every strategy and continuous metric, the P90's 95% interval
half-width (the larger side) is at most `relative` x |P90| or at most `floor` (in the
metric's own unit), so that metrics near zero do not demand infinite samples. It is never met
without an interval: below 36 scenarios (statistics.p90_ci_min_samples) none exists. Draws are
addressed by scenario index, so growing a run from n to 2n scenarios gives exactly the run
of 2n scenarios.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .statistics import (CONTINUOUS_METRICS, finite_or_none, p90_ci_min_samples,
                         p90_ci_unavailable_reason, p90_confidence_interval)
from ..core.definitions import METRIC
from ..core.errors import McriskError

START_SAMPLES = 10_000           # a --precision run's first size, unless --samples is smaller


@dataclass(frozen=True)
class PrecisionTarget:
    relative: float = 0.02
    floor: float = 0.5
    start: int = START_SAMPLES
    max_samples: int = 10_000_000


def precision_target(relative: float, floor: float, samples: int,
                     max_samples: int) -> PrecisionTarget:
    """The target of --precision RELATIVE --precision-floor FLOOR --max-samples MAX, starting
    at `samples` scenarios or START_SAMPLES, whichever is fewer. A McriskError when
    max_samples is below the sample count at which P90 intervals exist: it could never be met."""
    needed = p90_ci_min_samples()
    if max_samples < needed:
        raise McriskError(f"--max-samples = {max_samples:,}: --precision can never be met, "
                          f"since a 95% interval of the P90 needs at least {needed} scenarios "
                          f"(use --max-samples {needed} or more)")
    return PrecisionTarget(relative=relative, floor=floor, start=min(samples, START_SAMPLES),
                           max_samples=max_samples)


def parse_precision(text: str) -> float:
    """'2%' or '0.02' -> 0.02."""
    text = text.strip()
    value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    if not 0 < value < 1:
        raise ValueError(f"precision must be a fraction in (0, 1) or a percentage, got {text!r}")
    return value


def worst_shortfall(metrics: np.ndarray, strategy_names, target: PrecisionTarget) -> dict:
    """The P90 whose interval is widest against its allowance, and whether all meet it.

    Returns {"met": bool, "strategy", "metric", "p90", "half_width", "allowed", "ratio"},
    plus "unavailable" (why) when that P90 has no interval yet: too few scenarios for one to
    exist. The target is never met without an interval (half_width None, ratio infinite).
    """
    worst = None
    for s, strategy in enumerate(strategy_names):
        for metric in CONTINUOUS_METRICS:
            candidate = _shortfall(metrics[:, s, METRIC[metric]], target)
            if worst is None or candidate["ratio"] > worst["ratio"]:
                worst = {"strategy": strategy, "metric": metric, **candidate}
    worst["met"] = worst["ratio"] <= 1.0
    return worst


def _shortfall(values: np.ndarray, target: PrecisionTarget) -> dict:
    """One P90 against the target: its interval's half-width (the larger side) over what the
    target allows; an interval that does not exist counts as infinitely wide."""
    p90 = finite_or_none(np.quantile(values, 0.9))
    ci = p90_confidence_interval(values)
    allowed = max(target.relative * abs(p90 or 0.0), target.floor)
    if ci is None or p90 is None:
        reason = (p90_ci_unavailable_reason(values.shape[0])
                  or "the P90 or its interval is not a finite number")
        return {"p90": p90, "half_width": None, "allowed": allowed, "ratio": math.inf,
                "unavailable": reason}
    half = finite_or_none(max(p90 - ci[0], ci[1] - p90))
    ratio = math.inf if half is None else half / allowed
    return {"p90": p90, "half_width": half, "allowed": allowed, "ratio": ratio}


def next_sample_count(current: int, worst: dict, target: PrecisionTarget) -> int:
    """CI half-widths shrink like 1/sqrt(n): aim a little past the estimate, at least
    +50%, at most x4, never past the cap; at least the fewest scenarios for which the
    intervals exist."""
    grow = min(4.0, max(1.5, 1.2 * worst["ratio"] ** 2))
    wanted = max(int(np.ceil(current * grow)), p90_ci_min_samples())
    return min(target.max_samples, wanted)


def precision_entry(target: PrecisionTarget, samples: int, worst: dict) -> dict:
    """summary.json's `precision`: the target, whether it was met after `samples` scenarios,
    and the P90 interval widest against its allowance (`worst`: worst_shortfall's report)."""
    widest = {k: worst[k] for k in ("strategy", "metric", "p90", "half_width", "allowed")}
    if "unavailable" in worst:
        widest["interval_unavailable"] = worst["unavailable"]
    return {"relative": target.relative, "floor": target.floor,
            "max_samples": target.max_samples, "met": bool(worst["met"]),
            "samples": samples, "widest": widest}
