"""The Pareto chart of report.html's cost section (issue 13): each strategy's mean total cost
against its P90 trough depth and, beside it, its P90 shortfall, the frontier joined, the
dominated strategies hollow and named. PNG bytes, drawn as mcrisk.report.figures draws (Agg,
laid out once by figure_layout, mathtext off so a `$` in a name is a dollar sign)."""
from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ..analysis.pareto import RISK_AXES
from . import figure_layout as layout
from .figures import _figure, _literal_text, _png, _short

_FRONTIER_STYLE = dict(color="#5b6470", linewidth=1.2, linestyle="-", zorder=1)
_Y_LABELS = {"trough_depth": "P90 trough depth (H100-eq below baseline)",
             "shortfall_gpu_days": "P90 shortfall (H100-eq × days)"}


def _label_offsets(points: list[tuple[float, float]], span: tuple[float, float]) -> list[int]:
    """A vertical offset (in label lines) for each point's label, so that the labels of points
    that lie on top of one another (within 3% of each axis's span) are stacked, not drawn over
    each other."""
    placed: list[tuple[float, float]] = []
    offsets = []
    for x, y in points:
        near = sum(1 for px, py in placed
                   if abs(px - x) <= 0.03 * span[0] and abs(py - y) <= 0.03 * span[1])
        offsets.append(near)
        placed.append((x, y))
    return offsets


def _errors(value: float, interval) -> list[float]:
    """[below, above] of an interval around `value` as errorbar wants it (0 where none)."""
    if interval is None:
        return [0.0, 0.0]
    low, high = interval
    return [max(0.0, value - low), max(0.0, high - value)]


def _panel(ax, report, summary: dict, risk: str, colors: dict[str, str]) -> None:
    """One panel: mean cost (x) against the P90 of `risk` (y)."""
    frontier = report.frontier(risk, "mean")
    names = [n for n in frontier.dominated_by
             if frontier.cost_values[n] is not None and frontier.risk_values[n] is not None]
    xs = [frontier.cost_values[n] for n in names]
    ys = [frontier.risk_values[n] for n in names]
    line = [n for n in frontier.frontier if n in names]
    ax.plot([frontier.cost_values[n] for n in line], [frontier.risk_values[n] for n in line],
            **_FRONTIER_STYLE)
    for name, x, y in zip(names, xs, ys):
        hollow = bool(frontier.dominated_by[name])
        ax.errorbar([x], [y], xerr=np.array([_errors(x, report.mean_cost_ci[name])]).T,
                    yerr=np.array([_errors(y, summary["strategies"][name][risk].get("p90_ci"))]).T,
                    fmt="none", ecolor=colors[name], elinewidth=1.0, alpha=0.6, zorder=2)
        ax.scatter([x], [y], s=70, zorder=3, linewidths=2.0, edgecolors=colors[name],
                   facecolors="white" if hollow else colors[name])
    span = (max(xs, default=1.0) - min(xs, default=0.0) or 1.0,
            max(ys, default=1.0) - min(ys, default=0.0) or 1.0)
    for name, x, y, up in zip(names, xs, ys, _label_offsets(list(zip(xs, ys)), span)):
        label = _short(name, 28) + (" (dominated)" if frontier.dominated_by[name] else "")
        ax.annotate(label, (x, y), xytext=(7, 5 + 11 * up), textcoords="offset points",
                    fontsize=8, color=colors[name])
    ax.margins(x=0.18, y=0.15)
    ax.set_xlabel(f"mean total cost ({report.currency})")
    ax.set_ylabel(_Y_LABELS[risk])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: report.money(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.grid(alpha=0.3)


@_literal_text
def pareto_chart(report, summary: dict, colors: dict[str, str]) -> bytes:
    """The frontier chart of a cost report (mcrisk.report.costs.CostReport): one panel per
    risk axis (P90 trough depth, P90 shortfall) against the mean total cost."""
    fig, grid = _figure(1, len(RISK_AXES), 12, 4.4)
    for ax, risk in zip(grid.flat, RISK_AXES):
        _panel(ax, report, summary, risk, colors)
    names = list(report.frontier().dominated_by)
    handles = [*(Line2D([], [], marker="o", linestyle="none", color=colors[n]) for n in names),
               Line2D([], [], **_FRONTIER_STYLE),
               Line2D([], [], marker="o", linestyle="none", markerfacecolor="white",
                      markeredgecolor="#5b6470")]
    labels = [*(_short(n, 28) for n in names), "the frontier", "dominated (hollow)"]

    def legend(ncol: int):
        return fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=9,
                          frameon=False)

    measure = layout.Measure(fig)
    top = layout.header(fig, measure, "Trough against cost: the Pareto frontier", 12, legend,
                        ncol=min(len(labels), 6))
    layout.arrange(fig, grid, measure, top)
    return _png(fig)
