"""The Pareto chart of report.html's cost section (issue 13): each strategy's mean total cost
against its P90 trough depth and, beside it, its P90 shortfall, the frontier joined, the
dominated strategies hollow, every point named (labels placed clear of each other). PNG
bytes, drawn as charts draws (Agg, laid out once by layout, mathtext off so a `$` in a name
is a dollar sign).

data.pareto_data takes what the chart draws out of the cost report (ParetoData: plain
numbers), and pareto_of draws it, so that the worker (worker.py) can draw it in a second
process that never imports the statistics behind the frontiers.
"""
from __future__ import annotations

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ...core.labels import heading
from . import layout
from .data import ParetoData, ParetoPanel
from .charts import new_figure, literal_text, to_png, short_name

_FRONTIER_STYLE = dict(color="#5b6470", linewidth=1.2, linestyle="-", zorder=1)


# Label placement in axes fractions, for a panel about 5 x 3.2 inches and 8-point labels:
# the width of a character, the height of a line, and where a label may go round its point
# (offset in points; the label's left edge at the offset, or its right edge when negative).
_CHAR, _LINE, _PANEL_PT = 0.0135, 0.05, (360.0, 230.0)
_SPOTS = ((7, 4), (7, -12), (-7, 4), (-7, -12), (7, 16), (7, -24), (-7, 16), (-7, -24))


# Up to this many points (the palette's colours) every point is named, clear of the others
# where one of _SPOTS allows; with more, a label that finds no clear spot is left out (the
# report's Pareto table names every strategy and whom it is dominated by).
_ALL_NAMED = 10


def _label_spots(points: list[tuple[float, float]], widths: list[float]) -> list[tuple | None]:
    """An offset for each point's label (in _SPOTS, in points) such that labels do not run
    over one another, over another point or past the right edge, where one of _SPOTS does
    not (None: no label, when more than _ALL_NAMED points leave it no clear spot); `points`
    and label `widths` in axes fractions."""
    marks = [(x - 0.012, x + 0.012, y - 0.02, y + 0.02) for x, y in points]
    placed: list[tuple[float, float, float, float]] = []
    spots = []
    for i, ((x, y), width) in enumerate(zip(points, widths)):
        def box(spot):
            dx, dy = spot[0] / _PANEL_PT[0], spot[1] / _PANEL_PT[1]
            left = x + dx if dx > 0 else x + dx - width
            return (left, left + width, y + dy, y + dy + _LINE)

        def clear(b) -> bool:
            others = placed + [m for j, m in enumerate(marks) if j != i]
            return (0.0 <= b[0] and b[1] <= 1.0 and
                    not any(b[0] < o[1] and o[0] < b[1] and b[2] < o[3] and o[2] < b[3]
                            for o in others))

        spot = next((sp for sp in _SPOTS if clear(box(sp))),
                    None if len(points) > _ALL_NAMED else _SPOTS[0])
        if spot is not None:
            placed.append(box(spot))
        spots.append(spot)
    return spots


def _tick(value: float, _=None) -> str:
    """A y tick: thousands separators, and the decimals a tick between whole numbers needs
    (2.5, not 2)."""
    if value == round(value):
        return f"{value:,.0f}"
    return f"{value:,.2f}".rstrip("0")


def _errors(value: float, interval) -> list[float]:
    """[below, above] of an interval around `value` as errorbar wants it (0 where none)."""
    if interval is None:
        return [0.0, 0.0]
    low, high = interval
    return [max(0.0, value - low), max(0.0, high - value)]


def _panel(ax, panel: ParetoPanel, currency: str, colors: dict[str, str]) -> None:
    """One panel: mean cost (x) against the P90 of its risk (y)."""
    from ...results.compare import money_text   # here: only this chart formats money

    names, xs, ys = panel.names, panel.xs, panel.ys
    where = dict(zip(names, zip(xs, ys)))
    ax.plot([where[n][0] for n in panel.line], [where[n][1] for n in panel.line],
            **_FRONTIER_STYLE)
    for name, x, y, x_ci, y_ci, hollow in zip(names, xs, ys, panel.x_ci, panel.y_ci,
                                              panel.hollow):
        ax.errorbar([x], [y], xerr=np.array([_errors(x, x_ci)]).T,
                    yerr=np.array([_errors(y, y_ci)]).T,
                    fmt="none", ecolor=colors[name], elinewidth=1.0, alpha=0.6, zorder=2)
        ax.scatter([x], [y], s=70, zorder=3, linewidths=2.0, edgecolors=colors[name],
                   facecolors="white" if hollow else colors[name])
    ax.margins(x=0.12, y=0.18)
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    labels = [short_name(name, 28) for name in names]
    points = [((x - x0) / ((x1 - x0) or 1.0), (y - y0) / ((y1 - y0) or 1.0))
              for x, y in zip(xs, ys)]
    spots = _label_spots(points, [len(label) * _CHAR for label in labels])
    for name, label, x, y, spot in zip(names, labels, xs, ys, spots):
        if spot is not None:
            ax.annotate(label, (x, y), xytext=spot, textcoords="offset points", fontsize=8,
                        color=colors[name], ha="left" if spot[0] > 0 else "right")
    ax.set_xlabel(f"mean total cost ({short_name(currency, 28)})")
    ax.set_ylabel(f"P90 {heading(panel.risk, typeset=True)}")
    # a currency's symbol in every tick ($1.2M); a code or a label is said once, in the
    # axis label (a long one would run the ticks into each other)
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _: money_text(v, currency).removesuffix(f" {currency}")))
    ax.yaxis.set_major_formatter(FuncFormatter(_tick))
    ax.grid(alpha=0.3)


@literal_text
def pareto_of(chart: ParetoData, colors: dict[str, str]) -> bytes:
    """The frontier chart of a cost report: one panel per risk axis (P90 trough depth, P90
    shortfall) against the mean total cost, from its numbers (data.pareto_data)."""
    fig, grid = new_figure(1, len(chart.panels), 12, 4.4)
    for ax, panel in zip(grid.flat, chart.panels):
        _panel(ax, panel, chart.currency, colors)
    names = list(chart.legend_names)
    handles = [*(Line2D([], [], marker="o", linestyle="none", color=colors[n]) for n in names),
               Line2D([], [], **_FRONTIER_STYLE),
               Line2D([], [], marker="o", linestyle="none", markerfacecolor="white",
                      markeredgecolor="#5b6470")]
    labels = [*(short_name(n, 28) for n in names), "the frontier", "dominated (hollow)"]

    def legend(ncol: int):
        return fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=9,
                          frameon=False)

    measure = layout.Measure(fig)
    top = layout.header(fig, measure, "Trough against cost: the Pareto frontier", 12, legend,
                        ncol=min(len(labels), 6))
    layout.arrange(fig, grid, measure, top)
    return to_png(fig)
