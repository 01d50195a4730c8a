"""Materiality: when a night-over-night change beyond Monte Carlo noise is large enough to be
reported (diff.md's list, the report, alerts on .delta conditions).

A change is material when |new - old| >= max(relative x max(|old|, |new|), the metric's
floor): by default 1% and one unit of the metric (a thousandth for the power probability).
`mcrisk nightly --materiality` sets both (parse_materiality).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.labels import unit
from ...results.mitigation import MATERIALITY_FLOORS
from ..text import visible

# The defaults: relative to the larger of the two values, with a floor of one unit of the
# metric (a thousandth for the power probability), so that a metric near 0 does not report
# every fraction of a unit.
DEFAULT_RELATIVE = 0.01
DEFAULT_FLOORS = dict(MATERIALITY_FLOORS)     # the value of mitigation uses them too


@dataclass(frozen=True)
class Materiality:
    """A change is material when |new - old| >= max(relative x max(|old|, |new|), floor)."""

    relative: float = DEFAULT_RELATIVE
    floors: tuple[tuple[str, float], ...] = tuple(DEFAULT_FLOORS.items())

    def floor(self, metric: str) -> float:
        return dict(self.floors).get(metric, 1.0)     # a cost or job column: one unit

    def threshold(self, metric: str, old: float, new: float) -> float:
        scale = max(abs(old), abs(new))
        return max(self.relative * scale, self.floor(metric))

    def is_material(self, metric: str, old: float, new: float) -> bool | None:
        """None when a value is missing (not a number), so that nothing can be said."""
        if not (math.isfinite(old) and math.isfinite(new)):
            return None
        delta = abs(new - old)
        return delta > 0 and delta >= self.threshold(metric, old, new)

    def describe(self) -> str:
        floors = ", ".join(f"{metric} {value:g}{' ' + _unit(metric, value) if unit(metric) else ''}"
                           for metric, value in self.floors)
        relative = (f"at least {100 * self.relative:g}% of the larger of the two nights' "
                    "values and ") if self.relative > 0 else ""
        return f"material: {relative}at least the metric's floor ({floors})"


def _unit(metric: str, value: float) -> str:
    """The metric's unit (core.labels) after an amount: 'day' after 1, else 'days'."""
    words = unit(metric)
    return words[:-1] if value == 1 and words.endswith("days") else words


def parse_materiality(specs) -> Materiality:
    """--materiality values: `2%` (the relative part) and `METRIC=AMOUNT` (that metric's floor,
    in its unit), repeated or comma-separated; what is not given keeps its default. ValueError
    naming every bad item."""
    relative, floors, bad = DEFAULT_RELATIVE, dict(DEFAULT_FLOORS), []
    for spec in specs:
        for item in (part.strip() for part in str(spec).split(",")):
            if not item:
                continue
            try:
                if item.endswith("%"):
                    relative = _amount(item[:-1]) / 100.0
                elif "=" in item:
                    metric, _, amount = (x.strip() for x in item.partition("="))
                    if metric not in floors:
                        raise ValueError(f"unknown metric {metric!r} (metrics: "
                                         f"{', '.join(DEFAULT_FLOORS)})")
                    floors[metric] = _amount(amount)
                else:
                    raise ValueError("write a relative amount with %, e.g. 2%, or an absolute "
                                     "one with its metric, e.g. trough_days=2")
            except ValueError as error:
                bad.append(f"{visible(item)!r}: {error}")
    if bad:
        raise ValueError("; ".join(bad))
    return Materiality(relative, tuple(floors.items()))


def _amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{visible(text)!r} is not a number") from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"must be a number >= 0, got {visible(text)}")
    return value

