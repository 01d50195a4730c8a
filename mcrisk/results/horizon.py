"""Horizon warnings: which strategies often complete after the horizon, so that their
trough days, shortfall, homeless days and (with a [costs] section) costs are cut there, and
what horizon would cover them (the metrics named by their labels, core.labels). The horizon
is never cut silently.

trough_days, shortfall_gpu_days and homeless_days count only what happens in [0, H), and
every cost column only what happens in [0, H] (docs/costs.md), while completion_day is not
cut at H. A strategy that often completes after H has part of its trough days, shortfall,
homeless days and costs left out of its numbers (and so of its rank). Per strategy the run
reports the probability that completion lies beyond H and the P99 completion day, and warns
where that probability is over BEYOND_HORIZON_NOTABLE (1%), naming a horizon that would cover
the P99 completion (rounded up to whole HORIZON_STEP days).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.labels import label
from .quantiles import linear_quantile

BEYOND_HORIZON_NOTABLE = 0.01       # warn when P(completion > H) exceeds this
HORIZON_STEP = 30                   # a suggested horizon is a multiple of this many days
CUT_AT_HORIZON = ("trough_days", "shortfall_gpu_days", "homeless_days")   # the warning names


def beyond_horizon(completion: np.ndarray, horizon: float) -> dict:
    """{"probability": P(completion > horizon), "completion_p99": P99 of completion or None
    when it is not finite}. A completion that is not a number counts as beyond."""
    completion = np.asarray(completion, dtype=np.float64)
    beyond = float(np.mean(~(completion <= horizon))) if completion.size else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        p99 = linear_quantile(completion, 0.99) if completion.size else math.nan
    return {"probability": beyond, "completion_p99": p99 if math.isfinite(p99) else None}


def covering_horizon(completion_p99: float | None, horizon: float,
                     step: int = HORIZON_STEP) -> int | None:
    """The smallest multiple of `step` days that is at least the P99 completion and longer
    than the current horizon; None when the P99 is not finite (no horizon covers it)."""
    if completion_p99 is None:
        return None
    cover = step * math.ceil(completion_p99 / step)
    if cover <= horizon:
        cover = step * (math.floor(horizon / step) + 1)
    return int(cover)


def _share(p: float) -> str:
    """A probability as a percentage that never rounds to 100% unless it is 1."""
    if p >= 1.0:
        return "every scenario"
    text = f"{p:.1%}"
    return ("over 99.9%" if text == "100.0%" else text) + " of scenarios"


def horizon_warnings(summary: dict) -> list[str]:
    """One plain-text sentence (no 'WARNING' prefix) per strategy, in ranking order, whose
    completion lies beyond the horizon with probability over BEYOND_HORIZON_NOTABLE; with
    costs (summary.json's top-level `costs`) it says that they are cut there too."""
    horizon = summary.get("horizon_days")
    out: list[str] = []
    if horizon is None:                 # a document without a horizon has nothing to cut
        return out
    cut = [label(m) for m in CUT_AT_HORIZON] + (["costs"] if "costs" in summary else [])
    cut = ", ".join(cut[:-1]) + " and " + cut[-1]
    for name in summary.get("ranking") or list(summary["strategies"]):
        beyond = summary["strategies"][name].get("beyond_horizon")
        if not beyond or not beyond["probability"] > BEYOND_HORIZON_NOTABLE:
            continue
        p99 = beyond["completion_p99"]
        cover = covering_horizon(p99, horizon)
        text = (f"{name} completes after the {horizon:,.0f}-day horizon in "
                f"{_share(beyond['probability'])}: its {cut} "
                f"count only what happens before day {horizon:,.0f}, and so does its rank. ")
        if cover is None:
            text += ("Its P99 completion day is not a finite number, so no horizon covers it.")
        else:
            text += (f"Its P99 completion is day {p99:,.0f}; a horizon of {cover:,} days would "
                     "cover it.")
        out.append(text)
    return out
