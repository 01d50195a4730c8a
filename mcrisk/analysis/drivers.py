"""Which uncertain inputs drive a metric: rank correlations and P90-conditional attribution.

Inputs are the scenario's independent draws (world quantities of kind SAMPLE and BURNIN that
vary), plus, for readability, groups of like draws summed over units (every rack's burn-in
days, every row's retrofit days ...). For each strategy and metric:

* `spearman`: the rank correlation between the input and the metric over all scenarios (a
  tornado chart's bar);
* `near_p90_mean` - `mean` = `shift`: how far the input sits from its overall mean (in its
  own unit, days) in the scenarios whose metric lies near its P90 (ranks 85% to 95%), which
  reads "the P90 trough comes with hall B energized 38 days later than on average".

Labels and groups come from each quantity's QuantityLabel (section, subject, part; see
mcrisk/quantities.py), never from parsing its name: ids may contain dots.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..definitions import METRICS, Q_BURNIN, Q_SAMPLE
from ..plan import CompiledScenario
from ..quantities import QuantityLabel

DRIVER_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                  "completion_day")
NEAR_P90 = (0.85, 0.95)   # rank window that counts as "near the P90"


@dataclass(frozen=True)
class Driver:
    input: str            # quantity name, or a group such as "unit.*.burn_in"
    label: str            # for people: "burn-in days (sum over 16 units)"
    spearman: float
    mean: float
    near_p90_mean: float

    @property
    def shift(self) -> float:
        return self.near_p90_mean - self.mean

    def as_dict(self) -> dict:
        return {"input": self.input, "label": self.label, "spearman": round(self.spearman, 4),
                "mean": self.mean, "near_p90_mean": self.near_p90_mean,
                "shift": self.shift}


# what a quantity's part is, in words; a part not listed reads as itself
_PART_WORDS = {"burn_in": "burn-in days", "install": "install days", "removal": "removal days",
               "drain": "drain days", "retrofit": "retrofit days"}
# how one quantity reads, by (section, part)
_LABELS = {
    ("shared", ""): "shared delay '{subject}'",
    ("risk", ""): "risk '{subject}'",
    ("unit_type", "h100_eq_per_gpu"): "{subject} performance per GPU",
    ("shipment", "arrival.delay"): "shipment {subject}'s own delay",
    ("hall", "energized.delay"): "hall {subject} energization slip",
    ("island", "ready.delay"): "{subject} fabric delivery delay",
    ("island", "install"): "{subject} fabric install",
    **{("unit", part): "{subject} " + words for part, words in _PART_WORDS.items()
       if part != "retrofit"},
    ("row", "retrofit"): "row {subject} retrofit days",
}
GROUPED_SECTIONS = ("unit", "row")   # like draws of these are also summed over every subject


def _label(label: QuantityLabel) -> str:
    """A readable label for one quantity: "hall B energization slip"; its name if none fits."""
    template = _LABELS.get((label.section, label.part))
    return label.name if template is None else template.format(subject=label.subject)


def _group_label(section: str, part: str) -> str:
    """A readable label for the sum of one part over every subject: "burn-in days of every
    unit"."""
    return f"{_PART_WORDS.get(part, part)} of every {section}"


def driver_inputs(plan: CompiledScenario, world: np.ndarray) -> tuple[list[str], list[str], np.ndarray]:
    """(names, labels, values[n, k]) of the varying independent inputs and their groups.

    A group is one part of every unit (or row), such as every unit's burn-in: it is named
    "unit.*.burn_in" and listed when it has more than one varying member."""
    names, labels, columns = [], [], []
    groups: dict[tuple[str, str], list[int]] = {}
    for q, label in enumerate(plan.quantity_labels):
        if plan.q_kind[q] not in (Q_SAMPLE, Q_BURNIN):
            continue
        column = world[:, q]
        if np.all(column == column[0]):
            continue
        names.append(plan.quantity_names[q])
        labels.append(_label(label))
        columns.append(column)
        if label.section in GROUPED_SECTIONS:
            groups.setdefault((label.section, label.part), []).append(q)
    for (section, part), members in groups.items():
        if len(members) > 1:
            names.append(f"{section}.*.{part}")
            labels.append(f"{_group_label(section, part)} (sum over {len(members)})")
            columns.append(world[:, members].sum(axis=1))
    values = np.stack(columns, axis=1) if columns else np.zeros((world.shape[0], 0))
    return names, labels, values


def centred_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks of each column, centred: what Spearman's correlation correlates."""
    from scipy import stats  # lazily: scipy.stats takes ~1.5 s to import (issue 12)

    ranks = stats.rankdata(values, axis=0)
    return ranks - ranks.mean(axis=0)


def _spearman_columns(metric: np.ndarray, value_ranks: np.ndarray) -> np.ndarray:
    """Spearman correlation of one metric with every column (Pearson of average ranks)."""
    r_metric = centred_ranks(metric)
    denom = np.sqrt((r_metric ** 2).sum() * (value_ranks ** 2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (r_metric @ value_ranks) / denom, np.nan)


def near_p90_rows(metric: np.ndarray) -> np.ndarray:
    """Indices of the scenarios whose metric ranks within NEAR_P90 (ties broken by index)."""
    order = np.argsort(metric, kind="stable")
    n = metric.shape[0]
    low, high = int(np.floor(NEAR_P90[0] * n)), int(np.ceil(NEAR_P90[1] * n))
    return order[low:max(high, low + 1)]


def metric_drivers(metric: np.ndarray, names, labels, values, top: int | None = None,
                   value_ranks: np.ndarray | None = None) -> list[Driver]:
    """Drivers of one metric, strongest rank correlation first; none if the metric is constant.

    value_ranks (centred_ranks(values)) may be passed in when several metrics share inputs.
    """
    if values.shape[1] == 0 or np.all(metric == metric[0]):
        return []
    rho = _spearman_columns(metric, centred_ranks(values) if value_ranks is None else value_ranks)
    near = near_p90_rows(metric)
    means, near_means = values.mean(axis=0), values[near].mean(axis=0)
    drivers = [Driver(names[k], labels[k], float(rho[k]), float(means[k]), float(near_means[k]))
               for k in range(len(names)) if np.isfinite(rho[k])]
    drivers.sort(key=lambda d: -abs(d.spearman))
    return drivers[:top] if top else drivers


def drivers_summary(plan: CompiledScenario, metrics: np.ndarray, world: np.ndarray,
                    top: int = 8) -> dict:
    """{strategy: {metric: [driver dicts]}} for the summary and report."""
    n = world.shape[0]                      # the scenarios whose inputs were kept
    names, labels, values = driver_inputs(plan, world)
    ranks = centred_ranks(values) if values.shape[1] else values
    out = {}
    for s, strategy in enumerate(plan.strategy_names):
        out[strategy] = {
            metric: [d.as_dict() for d in metric_drivers(
                metrics[:n, s, METRICS.index(metric)], names, labels, values, top, ranks)]
            for metric in DRIVER_METRICS}
    return out
