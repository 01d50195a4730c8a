"""What the report's figures draw, as plain arrays: small, picklable and light to import.

A figure function takes the run's objects (the compiled plan, the capacity bands, the replayed
scenario paths, the hall power rows, the metrics); drawing needs only a few numbers of each.
These stand-ins carry just those numbers, with the attribute names the figure code reads, so
that the figures are drawn without the simulation's modules (Numba, SciPy) and without the
per-scenario metrics: an exceedance or completion curve
is drawn from 401 quantiles (MetricCurves), whatever the number of scenarios; the Pareto
chart from its points (ParetoData), without the statistics behind the frontiers. Drawing from a
stand-in or from the object it stands for gives the same figure, byte for byte.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.definitions import COMPLETION_DAY, METRICS
from ...results.quantiles import inverted_cdf_quantiles

LEVELS = np.linspace(0.0, 1.0, 401)     # the quantile levels a distribution is drawn from
                                        # (0 and 1 among them: the curve's ends, _constant)


@dataclass(frozen=True)
class PlanLines:
    """The plan's numbers a chart draws as lines: baseline, horizon, largest job, and the
    demand points (definitions.demand_at and demand_label read demand_day, demand_p50 and
    demand_growth_q)."""

    baseline: float
    horizon: float
    largest_job: float
    demand_day: np.ndarray
    demand_value: np.ndarray
    demand_p50: np.ndarray
    demand_growth_q: np.ndarray


@dataclass(frozen=True)
class BandArrays:
    """A results.bands.CapacityBands without its streaming state: per strategy and day, the
    P10/P50/P90 of total capacity and of the largest island."""

    strategy_names: tuple[str, ...]
    days: np.ndarray
    total: np.ndarray              # [s, d, 3]
    largest: np.ndarray            # [s, d, 3]


@dataclass(frozen=True)
class Steps:
    """A step function's drawn points (paths.StepPath.xy())."""

    x: np.ndarray
    y: np.ndarray

    def xy(self) -> tuple[np.ndarray, np.ndarray]:
        return self.x, self.y


@dataclass(frozen=True)
class PathLines:
    """A replayed scenario as the band charts draw it (paths.ScenarioPath)."""

    label: str
    severity: str
    total: Steps
    largest: Steps


@dataclass(frozen=True)
class PowerRow:
    """One hall under one strategy as the power chart draws it (results.bands.HallPower)."""

    hall: str
    cap_kw: float
    peak_p90_kw: float
    peak_max_kw: float


@dataclass(frozen=True)
class MetricCurves:
    """One metric's distribution per strategy as the charts draw it: 401 quantiles
    ('inverted_cdf') per strategy, the finite range over all strategies, and for each
    strategy its value when it is one value in every scenario (else None)."""

    curves: tuple[np.ndarray, ...]
    lo: float
    hi: float
    constant: tuple[float | None, ...]


def plan_lines(plan) -> PlanLines:
    return PlanLines(float(plan.baseline), float(plan.horizon), float(plan.largest_job),
                     np.asarray(plan.demand_day), np.asarray(plan.demand_value),
                     np.asarray(plan.demand_p50), np.asarray(plan.demand_growth_q))


def band_arrays(bands) -> BandArrays:
    return BandArrays(tuple(bands.strategy_names), bands.days, bands.total, bands.largest)


def path_lines(paths: dict | None) -> dict | None:
    """{strategy: [PathLines]} of report_parts' {strategy: [ScenarioPath]}."""
    if paths is None:
        return None
    return {name: [PathLines(p.label, p.severity, Steps(*p.total.xy()), Steps(*p.largest.xy()))
                   for p in picked] for name, picked in paths.items()}


def power_rows(power: dict) -> dict[str, list[PowerRow]]:
    """{strategy: [PowerRow per hall]} of the run's {strategy: [HallPower]}."""
    return {name: [PowerRow(r.hall, float(r.cap_kw), float(r.peak_p90_kw), float(r.peak_max_kw))
                   for r in rows] for name, rows in power.items()}


def finite_range(values: np.ndarray) -> tuple[float, float]:
    """Shared x-range of all strategies' curves, so each runs flat from edge to edge."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)


def _constant(column: np.ndarray, curve: np.ndarray) -> float | None:
    """column[0] when every value of the column equals it ((column == column[0]).all()),
    else None; from its curve (inverted_cdf_quantiles at LEVELS), whose ends are the
    smallest and the largest value, NaN when a value is NaN: all equal when those two are.
    Performance: no pass over the strided column (25 of them at 10^6 scenarios, measured
    ~12 ms each)."""
    return float(column[0]) if column.size and curve[0] == curve[-1] else None


def metric_curves(values: np.ndarray) -> MetricCurves:
    """The MetricCurves of one metric's values[scenario, strategy]."""
    lo, hi = finite_range(values)
    columns = range(values.shape[1])
    curves = tuple(inverted_cdf_quantiles(values[:, s], LEVELS) for s in columns)
    return MetricCurves(curves, lo, hi,
                        tuple(_constant(values[:, s], curves[s]) for s in columns))


def curve_table(metrics: np.ndarray, names) -> dict[str, MetricCurves]:
    """{metric: MetricCurves} of metrics[n, s, 6] for the metrics `names`: all a curve chart
    needs of them (401 quantiles per strategy), so that it can be drawn elsewhere."""
    return {name: metric_curves(metrics[:, :, METRICS.index(name)]) for name in names}


# Okabe-Ito-like, distinguishable for most colour-blind readers, then tab10 for more.
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B",
            "#7F7F7F", "#BCBD22", "#17BECF")


class Figures(dict):
    """SVG elements by figure name, with what the captions need to say about them: `paths`,
    {figure: {strategy: [ScenarioPath]}} (the scenarios drawn as lines), `completion`,
    the completion chart's CompletionAxis (where its day axis is cut), and `costs`, the
    cost section's report.html.costs.CostReport (None without a [costs] section)."""

    def __init__(self, charts: dict[str, str], paths: dict | None = None,
                 completion: "CompletionAxis | None" = None, costs=None):
        super().__init__(charts)
        self.paths = paths or {}
        self.completion = completion
        self.costs = costs


def strategy_colors(names: tuple[str, ...]) -> dict[str, str]:
    """Colour of each strategy, by its position in the scenario."""
    return {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(names)}


@dataclass(frozen=True)
class CompletionAxis:
    """Where the completion chart's day axis ends, and what lies beyond it."""

    right: float                  # the axis's right end (day)
    cut: bool                     # whether some scenario completes after `right`
    p999: dict[str, float]        # each strategy's P99.9 ('inverted_cdf'; inf if not finite)
    beyond: dict[str, float]      # share of each strategy's scenarios after `right` (finite)
    latest: float                 # the latest finite completion day of any strategy
    latest_strategy: str
    never: dict[str, int]         # scenarios that never complete (infinite), per strategy
    widest: str | None            # the strategy whose P99.9 sets the axis; None: the horizon


def completion_axis(metrics: np.ndarray, names: tuple[str, ...],
                    horizon: float) -> CompletionAxis:
    """The day axis of the completion chart: up to the largest P99.9 of any strategy (and at
    least to the horizon), so that a few extreme scenarios do not squeeze the curves."""
    days = metrics[:, :, COMPLETION_DAY]
    p999 = {name: float(inverted_cdf_quantiles(days[:, s], 0.999))
            for s, name in enumerate(names)}
    finite = days[np.isfinite(days)]
    latest = float(finite.max()) if finite.size else horizon
    latest_strategy = names[int(np.argmax(np.where(np.isfinite(days), days, -np.inf).max(axis=0)))]
    lo = float(finite.min()) if finite.size else 0.0
    finite_p999 = {name: v for name, v in p999.items() if math.isfinite(v)}
    widest = max(finite_p999, key=finite_p999.get) if finite_p999 else None
    if widest is None or finite_p999[widest] <= horizon:
        widest = None
    end = horizon if widest is None else finite_p999[widest]
    right = end + max(1.0, 0.02 * (end - min(lo, horizon)))
    beyond = {name: float(np.mean(np.isfinite(days[:, s]) & (days[:, s] > right)))
              for s, name in enumerate(names)}
    never = {name: int(np.sum(~np.isfinite(days[:, s]))) for s, name in enumerate(names)}
    return CompletionAxis(right, latest > right, p999, beyond, latest,
                          latest_strategy, never, widest)


@dataclass(frozen=True)
class ParetoPanel:
    """One panel's points: the strategies with both values (in the frontier's order), their
    mean cost (x) with its interval and P90 risk (y) with its interval, whether each is
    dominated, and the frontier's strategies among them, in the order the line joins them."""

    risk: str
    names: tuple[str, ...]
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    x_ci: tuple
    y_ci: tuple
    hollow: tuple[bool, ...]
    line: tuple[str, ...]


@dataclass(frozen=True)
class ParetoData:
    """What costs.pareto_of draws: a panel per risk axis, the legend's strategies, the currency."""

    currency: str
    panels: tuple[ParetoPanel, ...]
    legend_names: tuple[str, ...]


def pareto_data(report, summary: dict) -> ParetoData:
    """The chart's numbers out of a cost report (mcrisk.report.html.costs.CostReport) and the
    summary.json document (each strategy's P90 interval)."""
    from ...results.pareto import RISK_AXES

    panels = []
    for risk in RISK_AXES:
        frontier = report.frontier(risk, "mean")
        names = tuple(n for n in frontier.dominated_by if frontier.cost_values[n] is not None
                      and frontier.risk_values[n] is not None)
        panels.append(ParetoPanel(
            risk, names, tuple(frontier.cost_values[n] for n in names),
            tuple(frontier.risk_values[n] for n in names),
            tuple(report.mean_cost_ci[n] for n in names),
            tuple(summary["strategies"][n][risk].get("p90_ci") for n in names),
            tuple(bool(frontier.dominated_by[n]) for n in names),
            tuple(n for n in frontier.frontier if n in names)))
    return ParetoData(report.currency, tuple(panels), tuple(report.frontier().dominated_by))
