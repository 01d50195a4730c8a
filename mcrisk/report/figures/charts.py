"""Figures of the report as PNG bytes (matplotlib, Agg backend, no display needed).

One colour per strategy, in scenario order, the same in every figure. Distributions over
scenarios are drawn from 401 quantiles ('inverted_cdf'), so a figure costs the same at 10^3
and 10^6 samples. Every figure is drawn with mathtext and TeX off, so that names and ids are
shown as written: a `$` in a hall id is a dollar sign, not the start of a formula.

Each figure is laid out once, before it is drawn (layout: room for titles, labels and
legends measured from their font metrics), and drawn once, when saved: tight_layout and
savefig(bbox_inches="tight") drew the figures two to three times, most of the report's time.
Figures are plain matplotlib.figure.Figure objects, not pyplot's: nothing global to close.
Every figure is drawn from data's plain stand-ins (the curve charts from data.curve_table's
quantiles: exceedance_of, completion_of), which is how the worker draws them in a second
process; this module imports neither Numba nor SciPy for that reason.
"""
from __future__ import annotations

import functools
import io
import math
import textwrap

from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, PercentFormatter

from ...core.definitions import demand_at, demand_label
from ...core.labels import axis_label, label as column_label
from . import data
from . import layout
from .data import CompletionAxis
from ..text import visible

if TYPE_CHECKING:      # not imported: the figure worker draws without Numba or SciPy
    from ...plan.record import CompiledScenario
    from ...results.bands import CapacityBands, HallPower
    from .paths import ScenarioPath

_LEVELS = data.LEVELS
_DPI = 100
_BASELINE_STYLE = dict(color="#444444", linestyle="--", linewidth=1.0)
_DEMAND_STYLE = dict(color="black", linestyle=":", linewidth=1.4)
_THOUSANDS = FuncFormatter(lambda x, _: f"{x:,.0f}")
# Large values as 200k, 1.5M, so that tick labels do not run into each other.
_COMPACT = FuncFormatter(lambda x, _: (f"{x / 1e6:,.3g}M" if abs(x) >= 1e6 else
                                       f"{x / 1e3:,.3g}k" if abs(x) >= 1e4 else f"{x:,.0f}"))


def literal_text(draw):
    """Run a figure function with mathtext and usetex off for every text it creates.

    matplotlib reads text between two `$` as mathtext (and, with usetex, all of it as TeX);
    a user's `$x^$` would then raise inside savefig, after other files were written. Text
    objects take parse_math from rcParams when they are created, and savefig runs inside
    the function, so the context covers titles, labels, legends and tick labels alike.
    """
    @functools.wraps(draw)
    def literal(*args, **kwargs):
        with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
            return draw(*args, **kwargs)
    return literal


def to_png(fig) -> bytes:
    """The figure as PNG, drawn once: its layout is already fixed (layout). zlib level
    3 instead of PIL's 6: the same pixels, a third less time encoding, ~6% more bytes."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, pil_kwargs={"compress_level": 3})
    return buffer.getvalue()


def new_figure(rows: int, cols: int, width: float, height: float, **shared):
    """A figure of rows x cols axes (as a 2-D array), not registered with pyplot."""
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(rows, cols, squeeze=False, **shared)


def _grid(n: int, width: float = 12.0, height: float = 3.2):
    """Up to three panels a row, sharing both axes, as a 2-D array with None in the cells past
    the n-th (no axes is made for them); tick labels only on the outer edges."""
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width, height * rows))
    cells = fig.add_gridspec(rows, cols)
    grid = np.full((rows, cols), None, dtype=object)
    for i in range(n):
        first = grid.flat[0]
        grid.flat[i] = ax = fig.add_subplot(cells[i // cols, i % cols], sharex=first,
                                            sharey=first)
        ax.label_outer()
    return fig, grid


def short_name(name: str, limit: int = 40) -> str:
    """A strategy name as a label: on one line, invisible characters escaped, shortened in
    the middle (names that differ only at their ends, as numbered plans do, stay apart)."""
    name = visible(name)
    if len(name) <= limit:
        return name
    tail = (limit - 1) // 3
    return name[:limit - 1 - tail] + "…" + name[len(name) - tail:]


# A note under a chart names at most this many strategies (the palette's colours: more are
# told apart by the report's tables, not by a list under an axis).
_NAMES_IN_A_NOTE = 10


def _names_in_a_note(names: list[str]) -> str:
    shown = ", ".join(short_name(n, 28) for n in names[:_NAMES_IN_A_NOTE])
    more = len(names) - _NAMES_IN_A_NOTE
    return shown if more <= 0 else f"{shown} and {more} more"


_P50_PATH = dict(linewidth=2.2)                              # in the strategy's colour
_P90_PATH = dict(color="#1b1f24", linewidth=1.1)


def _draw_paths(ax, paths: list[ScenarioPath] | None, which: str, color: str) -> None:
    """The replayed scenarios as exact step lines: the first quantile's in the strategy's
    colour, the next one's thin and dark on top (so both show where they are one scenario)."""
    for j, path in enumerate(paths or ()):
        x, y = getattr(path, which).xy()
        style = dict(color=color, **_P50_PATH) if j == 0 else _P90_PATH
        ax.step(x, y, where="post", zorder=3 + j, **style)


def _path_keys(paths: dict[str, list[ScenarioPath]] | None) -> tuple[list, list[str]]:
    """Legend handles and labels of the scenario lines (empty without paths)."""
    first = next(iter(paths.values()), None) if paths else None
    if not first:
        return [], []
    words = column_label(first[0].severity)
    handles = [Line2D([], [], color="#555555", **_P50_PATH),
               Line2D([], [], **_P90_PATH)][:len(first)]
    labels = [f"scenario at the {p.label} of {words}" + (" (strategy colour)" if j == 0 else
                                                           " (black)")
              for j, p in enumerate(first)]
    return handles, labels


def date_axis(ax, start, lo: float, hi: float) -> None:
    """A secondary axis on top of a day axis: the first of each month (gantt.date_ticks, at
    the day it begins: day t falls on start + floor(t)); nothing when `start` is None."""
    if start is None:
        return
    from ..html.gantt import date_ticks

    ticks = date_ticks(start, lo, hi)
    top = ax.secondary_xaxis("top")
    top.set_xticks([d for d, _ in ticks], [label for _, label in ticks])
    top.tick_params(labelsize=8)


@literal_text
def fan_chart(plan: CompiledScenario, bands: CapacityBands, colors: dict[str, str],
              paths: dict[str, list[ScenarioPath]] | None = None, start=None) -> bytes:
    """Total capacity per strategy: per-day P10-P90 band, whole scenarios (`paths`, exact step
    functions of continuous time), baseline and demand. `plan`, `bands` and `paths` may be
    their data stand-ins (PlanLines, BandArrays, PathLines): the same figure."""
    fig, grid = _grid(len(bands.strategy_names))
    axes = list(grid.flat)
    days = bands.days
    demand_days = np.union1d(days.astype(float), np.clip(plan.demand_day, 0.0, plan.horizon))
    demand = demand_at(plan, demand_days)
    for s, (ax, name) in enumerate(zip(axes, bands.strategy_names)):
        color = colors[name]
        ax.fill_between(days, bands.total[s, :, 0], bands.total[s, :, 2], step="post",
                        color=color, alpha=0.25, linewidth=0)
        _draw_paths(ax, (paths or {}).get(name), "total", color)
        ax.axhline(plan.baseline, **_BASELINE_STYLE)
        ax.plot(demand_days, demand, **_DEMAND_STYLE)
        ax.set_title(short_name(name), color=color, fontsize=11, fontweight="bold")
        ax.set_xlim(0, plan.horizon)
        date_axis(ax, start, 0, plan.horizon)
        ax.grid(alpha=0.3)
        ax.yaxis.set_major_formatter(_THOUSANDS)
    _label_grid(axes, len(bands.strategy_names), _day_label(start), "capacity (H100-eq)")
    handles, labels = _path_keys(paths)
    _key_legend(fig, grid, "Capacity in service C(t): per-day P10–P90 band and whole "
                "scenarios, against baseline and demand",
                [*handles, Line2D([], [], **_BASELINE_STYLE), Line2D([], [], **_DEMAND_STYLE)],
                [*labels, f"baseline {plan.baseline:,.0f}", demand_label(plan)])
    return to_png(fig)


def _key_legend(fig, grid, title: str, handles: list, labels: list[str]) -> None:
    """Title and a legend (the band, in neutral grey, then `handles`) above a grid, which is
    laid out under them."""
    def legend(ncol: int):
        return fig.legend([Patch(color="#777777", alpha=0.3, linewidth=0), *handles],
                          ["P10–P90 of each day (strategy colour)", *labels],
                          loc="upper center", ncol=ncol, fontsize=9, frameon=False)

    measure = layout.Measure(fig)
    layout.arrange(fig, grid, measure, layout.header(fig, measure, title, 12, legend, ncol=3))


@literal_text
def largest_island_chart(plan: CompiledScenario, bands: CapacityBands,
                         colors: dict[str, str],
                         paths: dict[str, list[ScenarioPath]] | None = None,
                         start=None) -> bytes:
    """The largest island's capacity per strategy against the largest job's size: per-day
    P10-P90 band and whole scenarios (`paths`); data stand-ins as for fan_chart."""
    fig, grid = _grid(len(bands.strategy_names), height=2.8)
    axes = list(grid.flat)
    days = bands.days
    for s, (ax, name) in enumerate(zip(axes, bands.strategy_names)):
        color = colors[name]
        ax.fill_between(days, bands.largest[s, :, 0], bands.largest[s, :, 2], step="post",
                        color=color, alpha=0.25, linewidth=0)
        _draw_paths(ax, (paths or {}).get(name), "largest", color)
        ax.axhline(plan.largest_job, color="#B00020", linestyle="--", linewidth=1.0)
        ax.set_title(short_name(name), color=color, fontsize=11, fontweight="bold")
        ax.set_xlim(0, plan.horizon)
        date_axis(ax, start, 0, plan.horizon)
        ax.grid(alpha=0.3)
        ax.yaxis.set_major_formatter(_THOUSANDS)
    _label_grid(axes, len(bands.strategy_names), _day_label(start),
                "largest island (H100-eq)")
    handles, labels = _path_keys(paths)
    _key_legend(fig, grid, "Largest island's capacity: can the largest job still run?",
                [*handles, Line2D([], [], color="#B00020", linestyle="--", linewidth=1.0)],
                [*labels, f"largest job {plan.largest_job:,.0f}"])
    return to_png(fig)


def _day_label(start) -> str:
    return ("day of the plan" if start is None else
            f"day of the plan (top: dates, day 0 = {start.isoformat()})")


def _label_grid(axes, n: int, xlabel: str, ylabel: str) -> None:
    cols = min(3, n)
    rows = math.ceil(n / cols)
    for i, ax in enumerate(list(axes)[:n]):
        if i % cols == 0:
            ax.set_ylabel(ylabel)
        if i // cols == rows - 1 or i + cols >= n:
            ax.set_xlabel(xlabel)
            ax.tick_params(labelbottom=True)


_LEVEL_STYLE = dict(color="#888888", linewidth=0.8, linestyle=":")
_DASH = 5.0                       # points: the dash length of curves drawn over each other


def _widths(n: int) -> list[float]:
    """Line widths in drawing order, widest first: a curve drawn over an earlier one that
    runs close to it leaves the earlier one showing at its edges."""
    step = min(0.8, 3.2 / max(n - 1, 1))
    return [1.2 + step * (n - 1 - s) for s in range(n)]


def _same_curves(curves: list[np.ndarray]) -> list[list[int]]:
    """Indices of identical curves, grouped (each group in order, groups by first member)."""
    groups: dict[bytes, list[int]] = {}
    for s, curve in enumerate(curves):
        groups.setdefault(np.ascontiguousarray(curve).tobytes(), []).append(s)
    return list(groups.values())


def _draw_curves(ax, table: data.MetricCurves, names: tuple[str, ...], colors: dict[str, str],
                 hi: float, exceed: bool) -> list[str]:
    """Step curves of every strategy; returns notes on the ones that would hide each other.

    Identical curves (the same quantiles at every level; e.g. two strategies at 0 in every
    scenario) are drawn with alternating dashes, so each colour shows, and named in a note.
    """
    notes = []
    curves, lo = table.curves, table.lo
    widths = _widths(len(names))
    y = np.concatenate([[1.0], 1.0 - _LEVELS, [0.0]]) if exceed else \
        np.concatenate([[0.0], _LEVELS, [1.0]])
    for group in _same_curves(curves):
        for j, s in enumerate(group):
            x = np.concatenate([[lo], curves[s], [hi]])
            style = {} if len(group) == 1 else dict(
                linestyle=(j * _DASH, (_DASH, _DASH * (len(group) - 1))))
            width = widths[group[0]] if len(group) > 1 else widths[s]
            ax.step(x, y, where="post", color=colors[names[s]], linewidth=width, **style)
        who = _names_in_a_note([names[s] for s in group])
        value = table.constant[group[0]]
        if value is not None:                                # a step at one value
            many = f"{len(group)} strategies" if len(group) > 1 else "1 strategy"
            dashed = " (drawn dashed, one over the other)" if len(group) > 1 else ""
            notes.append(f"{many} at {value:,.4g} in every scenario{dashed}: {who}")
        elif len(group) > 1:
            notes.append(f"{len(group)} strategies with the same curve (dashed): {who}")
    return notes


def _with_notes(label: str, notes: list[str], width: int) -> str:
    return "\n".join([label, *(line for note in notes
                                for line in textwrap.wrap(note, width))])


def _strategy_handles(names: tuple[str, ...], colors: dict[str, str]) -> list:
    return [Line2D([], [], color=colors[name], linewidth=width)
            for name, width in zip(names, _widths(len(names)))]


@literal_text
def exceedance_of(table: dict[str, data.MetricCurves], names: tuple[str, ...],
                  colors: dict[str, str], panels: tuple[tuple[str, str], ...],
                  title: str) -> bytes:
    """P(metric > x) per strategy, one panel per (metric, x-axis label), from each panel's
    curves (data.curve_table of the metrics)."""
    fig, grid = new_figure(1, len(panels), 12, 3.8)
    width = 150 // len(panels)
    for ax, (metric, xlabel) in zip(grid.flat, panels):
        curves = table[metric]
        notes = _draw_curves(ax, curves, names, colors, curves.hi, True)
        ax.axhline(0.10, **_LEVEL_STYLE)
        ax.set_xlabel(_with_notes(xlabel, notes, width))
        ax.set_ylabel("probability of exceeding")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.xaxis.set_major_formatter(_COMPACT)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    _strategy_legend(fig, grid, title,
                     [*_strategy_handles(names, colors), Line2D([], [], **_LEVEL_STYLE)],
                     [*(short_name(n, 28) for n in names), "1 in 10: a curve crosses it at its P90"])
    return to_png(fig)


def _strategy_legend(fig, grid, title: str, handles: list, labels: list[str]) -> None:
    """One legend row (more if it would not fit) under the title, outside the plotting area,
    so that the curves stay visible; the panels of `grid` are laid out under it."""
    def legend(ncol: int):
        return fig.legend(handles, labels, loc="upper center", ncol=ncol, fontsize=9,
                          frameon=False)

    measure = layout.Measure(fig)
    top = layout.header(fig, measure, title, 12, legend, ncol=min(len(labels), 6))
    layout.arrange(fig, grid, measure, top)


@literal_text
def completion_of(curves: data.MetricCurves, names: tuple[str, ...], colors: dict[str, str],
                  horizon: float, axis: CompletionAxis, start=None) -> bytes:
    """S-curves: P(completion_day <= x) per strategy, from completion_day's curves
    (data.curve_table), the day axis cut as `axis` (data.completion_axis) says."""
    fig, grid = new_figure(1, 1, 12, 3.8)
    ax = grid[0, 0]
    lo = curves.lo
    notes = _draw_curves(ax, curves, names, colors, max(curves.hi, axis.right), False)
    ax.axvline(horizon, **_BASELINE_STYLE)
    for level in (0.5, 0.9):
        ax.axhline(level, **_LEVEL_STYLE)
    left = min(lo, horizon)
    ax.set_xlim(left - max(1.0, 0.02 * (axis.right - left)), axis.right)
    date_axis(ax, start, left - max(1.0, 0.02 * (axis.right - left)), axis.right)
    label = axis_label("completion_day")
    if start is not None:
        label += f"; top: dates, day 0 = {start.isoformat()}"
    if axis.cut:
        label += (f"; axis cut at day {axis.right:,.0f}: later completions, up to day "
                  f"{axis.latest:,.0f}, are off the chart")
    ax.set_xlabel(_with_notes(label, notes, 150))
    ax.set_ylabel("probability done by then")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_formatter(_THOUSANDS)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    _strategy_legend(fig, grid, "Completion S-curves (ECDF of completion_day)",
                     [*_strategy_handles(names, colors), Line2D([], [], **_BASELINE_STYLE),
                      Line2D([], [], **_LEVEL_STYLE)],
                     [*(short_name(n, 28) for n in names), f"horizon H = {horizon:,.0f} days",
                      "50% and 90%"])
    return to_png(fig)


# The power chart draws at most this many halls, those nearest their caps (the report's table
# lists every hall), three a row; and each strategy's bar with its 8-point name takes this
# many inches, so that a hundred strategies' names stay apart.
_POWER_PANELS = 12
_BAR_PITCH = 0.17


def _halls_to_draw(power: dict, names: list[str]) -> list[int]:
    """The indices of the halls the power chart draws, in file order: every hall, or the
    _POWER_PANELS whose highest P90 peak is nearest their cap (as a share of it)."""
    halls = len(power[names[0]]) if names else 0
    if halls <= _POWER_PANELS:
        return list(range(halls))
    share = [max(power[n][h].peak_p90_kw for n in names) / power[names[0]][h].cap_kw
             for h in range(halls)]
    return sorted(sorted(range(halls), key=lambda h: -share[h])[:_POWER_PANELS])


@literal_text
def power_chart(power: dict[str, list[HallPower]], colors: dict[str, str]) -> bytes:
    """P90 peak draw per hall and strategy against each hall's cap (HallPower rows or their
    data.PowerRow stand-ins), one panel per hall, three a row."""
    names = list(power)
    drawn = _halls_to_draw(power, names)
    total = len(power[names[0]]) if names else 0
    cols = min(3, len(drawn)) if len(drawn) > 3 else max(1, len(drawn))
    rows = math.ceil(len(drawn) / cols) if drawn else 1
    fig, grid = new_figure(rows, cols, 12, 3.8 * rows)
    for ax in grid.flat[len(drawn):]:
        ax.set_visible(False)
    legends = []
    for h, ax in zip(drawn, grid.flat):
        hall_rows = [power[name][h] for name in names]
        y = np.arange(len(names))
        ax.barh(y, [r.peak_p90_kw for r in hall_rows], color=[colors[n] for n in names],
                alpha=0.85)
        ax.scatter([r.peak_max_kw for r in hall_rows], y, marker="|", s=200, color="black",
                   label="highest in any scenario", zorder=3)
        ax.axvline(hall_rows[0].cap_kw, color="#B00020", linewidth=1.5,
                   label=f"cap {hall_rows[0].cap_kw:,.0f} kW")
        ax.set_yticks(y, [short_name(n, 24) for n in names], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"hall {short_name(hall_rows[0].hall, 24)}: P90 peak draw (kW)")
        ax.xaxis.set_major_formatter(_THOUSANDS)
        ax.grid(alpha=0.3, axis="x")
        legends.append((ax, ax.legend(fontsize=8, loc="upper center", frameon=False,
                                      ncol=2 if len(drawn) <= 2 else 1)))   # narrower panels
    title = "Power check per hall: peak IT draw against the cap"
    if len(drawn) < total:
        title += f" (the {len(drawn)} of {total:,} halls nearest their caps)"
    measure = layout.Measure(fig)
    top = layout.header(fig, measure, title, 12)
    under = max([0.0, *(layout.legend_room(legend, measure) for _, legend in legends)])
    bars = _BAR_PITCH * len(names)          # a bar per strategy, its name beside it
    layout.arrange(fig, grid, measure, top, under=under,
                   least_height=max(layout.LEAST_PLOT_HEIGHT, bars),
                   grown_height=max(layout.ROOMY_PLOT_HEIGHT, bars))
    for ax, legend in legends:                  # under each hall's x label, once placed
        layout.legend_under(ax, measure, legend)
    return to_png(fig)
