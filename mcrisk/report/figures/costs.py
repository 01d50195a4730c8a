"""The Pareto chart of report.html's cost section (issue 13): each strategy's mean total cost
against its P90 trough depth and, beside it, its P90 shortfall, the frontier joined, the
dominated strategies hollow, every point named (labels placed clear of each other). Inline
SVG, drawn as charts draws (svg.py's primitives, laid out once from its texts' widths).

data.pareto_data takes what the chart draws out of the cost report (ParetoData: plain
numbers), and pareto_of draws it, without the statistics behind the frontiers.
"""
from __future__ import annotations

from ...core.labels import heading
from . import svg
from .data import ParetoData, ParetoPanel
from .charts import short_name
from .svg import PT, Axis, Cell, Header, Key, Legend

_FRONTIER_STYLE = dict(color="#5b6470", width=1.2 * PT)
_LABEL_SIZE = 11.0


# Where a label may go round its point (offset in pixels; the label's left edge at the
# offset, or its right edge when negative; y upwards).
_SPOTS = ((10, 6), (10, -17), (-10, 6), (-10, -17), (10, 22), (10, -33), (-10, 22),
          (-10, -33))


# Up to this many points (the palette's colours) every point is named, clear of the others
# where one of _SPOTS allows; with more, a label that finds no clear spot is left out (the
# report's Pareto table names every strategy and whom it is dominated by).
_ALL_NAMED = 10


def _label_spots(points: list[tuple[float, float]], widths: list[float], size: tuple[float, float]
                 ) -> list[tuple | None]:
    """An offset for each point's label (in _SPOTS, in pixels) such that labels do not run
    over one another, over another point or past the panel's edges, where one of _SPOTS does
    not (None: no label, when more than _ALL_NAMED points leave it no clear spot); `points`
    in pixels from the panel's lower left corner (y upwards), label `widths` in pixels,
    `size` the panel's (width, height)."""
    line = _LABEL_SIZE * 1.2
    marks = [(x - 7, x + 7, y - 7, y + 7) for x, y in points]
    placed: list[tuple[float, float, float, float]] = []
    spots = []
    for i, ((x, y), width) in enumerate(zip(points, widths)):
        def box(spot):
            dx, dy = spot
            left = x + dx if dx > 0 else x + dx - width
            return (left, left + width, y + dy, y + dy + line)

        def clear(b) -> bool:
            others = placed + [m for j, m in enumerate(marks) if j != i]
            return (0.0 <= b[0] and b[1] <= size[0] and 0.0 <= b[2] and b[3] <= size[1] and
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


def _interval(value: float, interval) -> tuple[float, float]:
    """(low, high) of an interval around `value` (value itself where there is none)."""
    if interval is None:
        return value, value
    low, high = interval
    return min(value, low), max(value, high)


def _cell(panel: ParetoPanel, currency: str) -> Cell:
    """One panel's axes: mean cost (x) against the P90 of its risk (y), with matplotlib's
    margins round the points and their intervals."""
    from ...results.compare import money_text   # here: only this chart formats money

    xs = [v for x, ci in zip(panel.xs, panel.x_ci) for v in _interval(x, ci)]
    ys = [v for y, ci in zip(panel.ys, panel.y_ci) for v in _interval(y, ci)]
    x_lo, x_hi = svg.padded(min(xs, default=0.0), max(xs, default=1.0), 0.12)
    y_lo, y_hi = svg.padded(min(ys, default=0.0), max(ys, default=1.0), 0.18)

    def money(v, _step):
        # a currency's symbol in every tick ($1.2M); a code or a label is said once, in the
        # axis label (a long one would run the ticks into each other)
        return money_text(v, currency).removesuffix(f" {currency}")

    return Cell(Axis.linear(x_lo, x_hi, money, target=8,
                            title=f"mean total cost ({short_name(currency, 28)})"),
                Axis.linear(y_lo, y_hi, _tick, target=6,
                            title=f"P90 {heading(panel.risk, typeset=True)}"))


def _draw(plot, panel: ParetoPanel, colors: dict[str, str]) -> None:
    """The frontier, each point with its intervals, and the labels clear of each other."""
    names, xs, ys = panel.names, panel.xs, panel.ys
    where = dict(zip(names, zip(xs, ys)))
    plot.line([where[n][0] for n in panel.line], [where[n][1] for n in panel.line],
              "frontier", "the frontier", **_FRONTIER_STYLE)
    for name, x, y, x_ci, y_ci, hollow in zip(names, xs, ys, panel.x_ci, panel.y_ci,
                                              panel.hollow):
        px, py = float(plot.X(x)), float(plot.Y(y))
        (x0, x1), (y0, y1) = _interval(x, x_ci), _interval(y, y_ci)
        plot.raw(f'<g class="point" stroke="{colors[name]}"><title>{svg.esc(name)}'
                 f'{" (dominated)" if hollow else ""}</title>'
                 f'<g stroke-opacity="0.6" stroke-width="1.4">'
                 f'<line x1="{svg.num(float(plot.X(x0)))}" x2="{svg.num(float(plot.X(x1)))}" '
                 f'y1="{svg.num(py)}" y2="{svg.num(py)}"/>'
                 f'<line x1="{svg.num(px)}" x2="{svg.num(px)}" y1="{svg.num(float(plot.Y(y0)))}" '
                 f'y2="{svg.num(float(plot.Y(y1)))}"/></g>'
                 f'<circle cx="{svg.num(px)}" cy="{svg.num(py)}" r="5.8" stroke-width="2.8" '
                 f'fill="{"white" if hollow else colors[name]}"/></g>')
    labels = [short_name(name, 28) for name in names]
    spots = _label_spots([(float(plot.X(x)) - plot.x, plot.y + plot.h - float(plot.Y(y)))
                          for x, y in zip(xs, ys)],
                         [svg.text_width(label, _LABEL_SIZE) for label in labels],
                         (plot.w, plot.h))
    texts = []
    for name, label, x, y, spot in zip(names, labels, xs, ys, spots):
        if spot is not None:
            anchor = "start" if spot[0] > 0 else "end"
            texts.append(f'<text class="name" x="{svg.num(float(plot.X(x)) + spot[0])}" '
                         f'y="{svg.num(float(plot.Y(y)) - spot[1] - _LABEL_SIZE * 0.25)}" '
                         f'text-anchor="{anchor}" font-size="{_LABEL_SIZE}" '
                         f'fill="{colors[name]}">{svg.esc(label)}</text>')
    plot.raw("".join(texts))


def pareto_of(chart: ParetoData, colors: dict[str, str]) -> str:
    """The frontier chart of a cost report: one panel per risk axis (P90 trough depth, P90
    shortfall) against the mean total cost, from its numbers (data.pareto_data)."""
    fid = "fig-pareto"
    names = list(chart.legend_names)
    keys = [*(Key("marker", short_name(n, 28), dict(fill=colors[n])) for n in names),
            Key("line", "the frontier", _FRONTIER_STYLE),
            Key("marker", "dominated (hollow)", dict(fill="white", stroke="#5b6470"))]
    header = Header("Trough against cost: the Pareto frontier",
                    Legend(keys, min(len(keys), 6), svg.WIDTH - 2 * svg.PAD))
    cells = [[_cell(panel, chart.currency) for panel in chart.panels]]
    plots, height = svg.arrange(fid, cells, header.height, 260.0)
    for plot, panel in zip(plots, chart.panels):
        _draw(plot, panel, colors)
    return svg.figure_svg(fid, "Pareto frontier of trough against cost", height,
                          [header.svg(), *(p.svg() for p in plots)])
