"""Which uncertain inputs drive a metric: rank correlations and P90-conditional attribution.

Inputs are the scenario's independent draws (world quantities of kind SAMPLE and BURNIN that
vary), plus, for readability, groups of like draws summed over units (every rack's burn-in
days, every row's retrofit days ...). For each strategy and metric:

* `spearman`: the rank correlation between the input and the metric over all scenarios (a
  tornado chart's bar);
* `near_p90_mean` - `mean` = `shift`: how far the input sits from its overall mean (in its
  own unit: driver_unit) in the scenarios whose metric lies near its P90 (ranks 85% to 95%), which
  reads "the P90 trough comes with hall B energized 38 days later than on average".

Labels and groups come from each quantity's QuantityLabel (section, subject, part; see
mcrisk/core/quantities.py), never from parsing its name: ids may contain dots.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..core.tasks import COMPILED_FROM_NODE_TIMES, run_tasks
from ..core.definitions import METRICS, Q_BURNIN, Q_EARLY, Q_SAMPLE
from ..plan.record import CompiledScenario
from ..core.quantities import QuantityLabel
from .quantiles import compiled_from

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
               "drain": "drain days", "retrofit": "retrofit days",
               "early_failure.repair": "repair days after an early failure",
               "soak_days": "extra soak days",
               "early_failure": "failures after acceptance"}
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
    ("demand", "growth_per_year"): "demand growth per year",
    ("unit", "early_failure"): "{subject} fails after acceptance (1: yes, 0: no)",
}
GROUPED_SECTIONS = ("unit", "row")   # like draws of these are also summed over every subject


def driver_unit(name: str) -> str:
    """The unit of a driver input, from its quantity's name: a per-GPU performance in H100-eq
    per GPU, an early failure a count (1 or 0 per unit), the demand's growth a share per
    year, a price in the scenario's currency, every other input (delays, durations) days."""
    if name.endswith(".h100_eq_per_gpu"):
        return "H100-eq per GPU"
    if name.endswith(".early_failure"):
        return "failures"
    if name.endswith(".growth_per_year"):
        return "per year (share)"
    if name.startswith("cost."):
        return "currency units"
    return "days"


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
    names, labels, kept = [], [], []
    groups: dict[tuple[str, str], list[int]] = {}
    varies = ~np.all(world == world[:1], axis=0)      # one pass over the rows
    for q, label in enumerate(plan.quantity_labels):
        if plan.q_kind[q] not in (Q_SAMPLE, Q_BURNIN, Q_EARLY) or not varies[q]:
            continue
        names.append(plan.quantity_names[q])
        labels.append(_label(label))
        kept.append(q)
        if label.section in GROUPED_SECTIONS:
            groups.setdefault((label.section, label.part), []).append(q)
    sums = []
    for (section, part), members in groups.items():
        if len(members) > 1:
            names.append(f"{section}.*.{part}")
            labels.append(f"{_group_label(section, part)} (sum over {len(members)})")
            sums.append(members)
    values = np.empty((world.shape[0], len(kept) + len(sums)))
    values[:, :len(kept)] = world[:, kept]
    # an early failure's quantity is the unit's service age at the failure, +inf where it
    # does not fail: the input is whether it fails (1 or 0), so means and sums are counts
    early = [k for k, q in enumerate(kept) if plan.q_kind[q] == Q_EARLY]
    values[:, early] = np.isfinite(values[:, early])
    for k, members in enumerate(sums):
        columns = [kept.index(q) for q in members]
        values[:, len(kept) + k] = values[:, columns].sum(axis=1)
    return names, labels, values


def centred_ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks of each column (scipy.stats.rankdata(values, axis=0)), centred: what
    Spearman's correlation correlates.

    Performance: a column at a time, each contiguous, by NumPy's (unstable, vectorized)
    argsort: scipy's rankdata sorted the [scenario, input] array along its strided axis with
    a stable sort, 4-5x slower (reference, 250,000 scenarios: 7.4 s), for the same ranks.
    From COMPILED_FROM scenarios on, compiled loops rank each column (column_ranks)."""
    if values.ndim == 1:
        ranks = column_ranks(values)
    else:       # [input, scenario], seen as [scenario, input]: scipy's layout, so every sum
        ranks = np.empty(values.shape[::-1])     # over scenarios adds in the same order
        # many short columns (a plan with thousands of inputs) through the compiled loops
        # too: half the CPU of NumPy's (20,000 x 2,000: 0.74 s against 1.48), and loaded
        # anyway by a run whose node times are that many
        compiled = values.shape[0] >= compiled_from() or (
            values.size >= COMPILED_FROM_NODE_TIMES and compiled_from() < values.size)

        def rank(j: int) -> None:
            ranks[j] = column_ranks(np.ascontiguousarray(values[:, j]), compiled)

        # the columns side by side on the run's threads (compiled loops without the GIL)
        run_tasks([functools.partial(rank, j) for j in range(values.shape[1])])
        ranks = ranks.T
    ranks -= ranks.mean(axis=0)                  # in place: one [scenario, input] array
    return ranks


def column_ranks(values: np.ndarray, compiled: bool | None = None) -> np.ndarray:
    """average_ranks(values, numpy.argsort(values)) of a contiguous 1-D array (the spec);
    performance: from core.tasks.COMPILED_FROM values on (or where `compiled` says so), the
    same ranks from compiled loops (results.selection: a radix argsort, 2-4x faster than
    NumPy's on 250,000, and one walk over it)."""
    if compiled is None:
        compiled = values.size >= compiled_from()
    if not compiled:
        return average_ranks(values, np.argsort(values))
    from .selection import average_ranks as compiled_ranks, stable_argsort

    values = np.ascontiguousarray(values, dtype=np.float64)
    order = np.empty(values.size, np.int64)
    stable_argsort(values, order)
    ranks = np.empty(values.size)
    compiled_ranks(values, order, ranks)
    return ranks


def stable_order(values: np.ndarray) -> np.ndarray:
    """numpy.argsort(values, kind='stable'): ties (NaN with NaN too) in index order.

    Performance: NumPy's vectorized argsort, not stable, then every run of ties put in
    index order by one sort of integer keys (run number, index); 2-3x faster than the
    stable argsort (a merge sort) on 250,000 values. From core.tasks.COMPILED_FROM values
    on, a compiled radix sort (results.selection.stable_argsort, stable by construction),
    2-4x faster again."""
    n = values.size
    if n >= compiled_from():
        from .selection import stable_argsort

        order = np.empty(n, np.int64)
        stable_argsort(np.ascontiguousarray(values, dtype=np.float64), order)
        return order
    order = np.argsort(values)
    ordered = values[order]
    same = (ordered[1:] == ordered[:-1]) | (np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    run = np.concatenate([[0], np.cumsum(~same)])         # the run of ties of each place
    return np.sort(run * n + order) % n


def average_ranks(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """scipy.stats.rankdata(values) (1-D, method 'average': ties share the mean of their
    ranks, all NaN when a value is NaN) from order, an argsort of values (stable or not: the
    ties' ranks are averaged), which the caller has already."""
    ordered = values[order]
    if values.size and np.isnan(ordered[-1]):          # NaN sorts last
        return np.full(values.shape, np.nan)
    first = np.r_[True, ordered[1:] != ordered[:-1]]    # where each run of ties starts
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], values.size]               # one past each run
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(0.5 * (starts + ends + 1), ends - starts)
    return ranks


def ranks_of_order(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """average_ranks(values, order); from core.tasks.COMPILED_FROM values on, in one
    compiled walk over the order (results.selection.average_ranks) instead of six NumPy
    passes."""
    if values.size < compiled_from():
        return average_ranks(values, order)
    from .selection import average_ranks as compiled_ranks

    ranks = np.empty(values.size)
    compiled_ranks(np.ascontiguousarray(values, dtype=np.float64), order, ranks)
    return ranks


@dataclass(frozen=True)
class DriverInputs:
    """The inputs of drivers_summary, with what every metric's drivers share computed once:
    their centred ranks, the sum of squares of those, and their means."""

    names: list[str]
    labels: list[str]
    values: np.ndarray          # [n, k]
    ranks: np.ndarray           # centred_ranks(values)
    rank_squares: np.ndarray    # (ranks ** 2).sum(axis=0)
    means: np.ndarray           # values.mean(axis=0)

    @classmethod
    def of(cls, names, labels, values) -> "DriverInputs":
        ranks = centred_ranks(values) if values.shape[1] else values
        # a column at a time (each contiguous: the same sums as (ranks ** 2).sum(axis=0)),
        # without a squared copy of the whole array
        squares = np.array([(ranks[:, k] ** 2).sum() for k in range(ranks.shape[1])])
        return cls(names, labels, values, ranks, squares, values.mean(axis=0))


def _spearman_columns(r_metric: np.ndarray, inputs: DriverInputs) -> np.ndarray:
    """Spearman correlation of one metric (its centred ranks) with every input (Pearson of
    average ranks)."""
    denom = np.sqrt((r_metric ** 2).sum() * inputs.rank_squares)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (r_metric @ inputs.ranks) / denom, np.nan)


def near_p90_rows(metric: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Indices of the scenarios whose metric ranks within NEAR_P90 (ties broken by index);
    order: numpy.argsort(metric, kind='stable'), when the caller has it."""
    if order is None:
        order = stable_order(metric)
    n = metric.shape[0]
    low, high = int(np.floor(NEAR_P90[0] * n)), int(np.ceil(NEAR_P90[1] * n))
    return order[low:max(high, low + 1)]


def metric_drivers(metric: np.ndarray, names, labels, values, top: int | None = None,
                   inputs: DriverInputs | None = None) -> list[Driver]:
    """Drivers of one metric, strongest rank correlation first; none if the metric is constant.

    inputs (DriverInputs.of(names, labels, values)) may be passed in when several metrics
    share them. The metric is sorted once: its ranks and the scenarios near its P90 both
    come from that one argsort.
    """
    if values.shape[1] == 0 or np.all(metric == metric[0]):
        return []
    inputs = DriverInputs.of(names, labels, values) if inputs is None else inputs
    order = stable_order(metric)
    ranks = ranks_of_order(metric, order)
    rho = _spearman_columns(ranks - ranks.mean(), inputs)
    near_means = values[near_p90_rows(metric, order)].mean(axis=0)
    drivers = [Driver(names[k], labels[k], float(rho[k]), float(inputs.means[k]),
                      float(near_means[k]))
               for k in range(len(names)) if np.isfinite(rho[k])]
    drivers.sort(key=lambda d: -abs(d.spearman))
    return drivers[:top] if top else drivers


def drivers_summary(plan: CompiledScenario, metrics: np.ndarray, world: np.ndarray,
                    top: int = 8) -> dict:
    """{strategy: {metric: [driver dicts]}} for the summary and report."""
    n = world.shape[0]                      # the scenarios whose inputs were kept
    names, labels, values = driver_inputs(plan, world)
    inputs = DriverInputs.of(names, labels, values)     # ranked once, for every metric
    found = {}

    def drivers_of(strategy: str, s: int, metric: str) -> None:
        found[strategy, metric] = [d.as_dict() for d in metric_drivers(
            metrics[:n, s, METRICS.index(metric)], names, labels, values, top, inputs)]

    # every (strategy, metric) side by side on the run's threads: each is its own sort and
    # products (compiled loops and BLAS, without the GIL), the same numbers as one by one
    run_tasks([functools.partial(drivers_of, strategy, s, metric)
               for s, strategy in enumerate(plan.strategy_names) for metric in DRIVER_METRICS])
    return {strategy: {metric: found[strategy, metric] for metric in DRIVER_METRICS}
            for strategy in plan.strategy_names}
