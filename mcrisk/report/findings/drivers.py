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
        return "its trough days vary between worlds"
    if metric == "shortfall_gpu_days":
        return "its trough days are the same in every world"
    return "no metric varies"


def against_intuition(d: dict) -> bool:
    """Whether a driver's sign runs against the obvious: a delay, a date or a duration (an
    input in days) that goes with a lower metric (every driven metric is worse higher)."""
    return driver_unit(d["input"]) == "days" and d["spearman"] < 0


def _named(d: dict, first: bool) -> str:
    """'X (rank correlation +0.41)' for the first driver, 'Y (+0.34)' after it; a label that
    ends in its own parenthesis (a sum over rows) takes the correlation inside it."""
    corr = f"rank correlation {d['spearman']:+.2f}" if first else f"{d['spearman']:+.2f}"
    if d["label"].endswith(")"):
        return d["label"][:-1] + f"; {corr})"
    return f"{d['label']} ({corr})"


def _joined(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def driven_by(summary: dict, name: str) -> str:
    """' Its trough days move most with X (rank correlation +0.56), Y (+0.34) and Z (-0.34);
    a higher Z goes with lower trough days, the others with higher.' from the run's drivers:
    the strongest by |rank correlation|, either sign, beyond noise; '' when none is."""
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
    named = _joined([_named(d, k == 0) for k, d in enumerate(found)])
    up = [d for d in found if d["spearman"] > 0]
    if len(up) == len(found):
        direction = f": the higher each, the higher its {words}" if len(found) > 1 else \
            f": the higher it, the higher its {words}"
    elif not up:
        direction = f": the higher each, the lower its {words}" if len(found) > 1 else \
            f": the higher it, the lower its {words}"
    else:
        downs = [d["label"].split(" (")[0] for d in found if d["spearman"] < 0]
        down = (f"a higher {downs[0]} goes" if len(downs) == 1 else
                f"a higher {_joined(downs)} go")
        direction = (f"; {down} with lower {words}, the "
                     f"{'other' if len(up) == 1 else 'others'} with higher")
    lead = (" It never dips below the baseline, so its drivers explain its shortfall: it "
            if metric == "shortfall_gpu_days" else f" Its {words} ")
    verb = "move" if metric == "trough_days" else "moves"     # trough days, plural
    text = lead + f"{verb} most with {named}{direction}."
    odd = [d["label"].split(" (")[0] for d in found if against_intuition(d)]
    if odd:
        text += (f" That a larger {' or a larger '.join(odd)} goes with lower {words} runs "
                 "against intuition; this run does not show why (a rank correlation is not a "
                 "mechanism: the milestones and the Gantt chart show which dates move).")
    return text
