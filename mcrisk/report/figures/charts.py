"""The figures of report.html as inline SVG (svg.py's primitives): fan charts, exceedance,
completion, power.

One colour per strategy, in scenario order, the same in every figure. Distributions over
scenarios are drawn from 401 quantiles ('inverted_cdf'), so a figure costs the same at 10^3
and 10^6 samples. Every figure is drawn from data's plain stand-ins or the objects they stand
for (the curve charts from data.curve_table's quantiles: exceedance_of, completion_of), as
text: a few milliseconds a figure, no plotting library imported (matplotlib took 2-3 s of a
default run for the seven figures, half of it importing itself). Each figure is laid out
once, from its texts' widths (svg.text_width), so that titles, ticks, labels and legends keep
clear of one another and of the plotting areas; names and ids are shown as written.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...core.definitions import demand_at, demand_label
from ...core.labels import axis_label, label as column_label
from . import data
from . import svg
from .data import CompletionAxis
from .svg import PT, Axis, Cell, Header, Key, Legend
from ..text import visible

if TYPE_CHECKING:      # not imported: the figures are drawn without Numba or SciPy
    from ...plan.record import CompiledScenario
    from ...results.bands import CapacityBands, HallPower
    from .paths import ScenarioPath

_LEVELS = data.LEVELS
_BASELINE_STYLE = dict(color="#444444", width=1.0 * PT, dash="5.1 2.2")
_DEMAND_STYLE = dict(color="black", width=1.4 * PT, dash="1.9 3.2")
_JOB_STYLE = dict(color="#B00020", width=1.0 * PT, dash="5.1 2.2")
_LEVEL_STYLE = dict(color="#888888", width=0.8 * PT, dash="1.1 1.8")
_BAND_OPACITY = 0.25
_LEGEND_COLUMNS = 6


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


_P50_PATH = dict(width=2.2 * PT)                              # in the strategy's colour
_P90_PATH = dict(color="#1b1f24", width=1.1 * PT)


def _draw_paths(panel, paths: list[ScenarioPath] | None, which: str, color: str,
                name: str) -> None:
    """The replayed scenarios as exact step lines: the first quantile's in the strategy's
    colour, the next one's thin and dark on top (so both show where they are one scenario)."""
    for j, path in enumerate(paths or ()):
        x, y = getattr(path, which).xy()
        style = dict(color=color, **_P50_PATH) if j == 0 else _P90_PATH
        tip = f"{name}: the scenario at the {path.label} of {column_label(path.severity)}"
        panel.step(x, y, f"scenario {path.label.lower()}", tip, **style)


def _path_keys(paths: dict[str, list[ScenarioPath]] | None) -> list[Key]:
    """Legend keys of the scenario lines (none without paths)."""
    first = next(iter(paths.values()), None) if paths else None
    if not first:
        return []
    words = column_label(first[0].severity)
    styles = [dict(color="#555555", **_P50_PATH), _P90_PATH]
    return [Key("line", f"scenario at the {p.label} of {words}"
                + (" (strategy colour)" if j == 0 else " (black)"), styles[j])
            for j, p in enumerate(first[:2])]


def date_ticks(start, lo: float, hi: float) -> list | None:
    """The first of each month over a day axis (gantt.date_ticks), for the axis on top;
    None without a start date."""
    if start is None:
        return None
    from ..html.gantt import date_ticks as ticks

    return ticks(start, lo, hi)


def _day_label(start) -> str:
    return ("day of the plan" if start is None else
            f"day of the plan (top: dates, day 0 = {start.isoformat()})")


def _band_chart(fid: str, label: str, title: str, plan, bands, colors, paths, start,
                which: str, level: float, level_css: str, level_style: dict, level_key: str,
                ylabel: str, plot_height: float, demand: bool) -> str:
    """A band chart (fan_chart, largest_island_chart): per strategy a panel with its
    per-day P10-P90 band of `which`, its replayed scenarios and a level line, three a row."""
    names = list(bands.strategy_names)
    n = len(names)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    days = np.asarray(bands.days, dtype=float)
    values = np.asarray(getattr(bands, which), dtype=float)
    demand_days = np.union1d(days, np.clip(plan.demand_day, 0.0, plan.horizon))
    demand_values = demand_at(plan, demand_days) if demand else np.array([])
    drawn = [values[:, :, 0].ravel(), values[:, :, 2].ravel(), [level], demand_values]
    for picked in (paths or {}).values():
        drawn += [getattr(p, which).xy()[1] for p in picked]
    every = np.concatenate([np.asarray(v, dtype=float).ravel() for v in drawn])
    every = every[np.isfinite(every)]
    lo, hi = svg.padded(float(every.min()), float(every.max())) if every.size else (0.0, 1.0)
    top = date_ticks(start, 0, plan.horizon)
    cells: list[list[Cell | None]] = [[None] * cols for _ in range(rows)]
    for i, name in enumerate(names):
        r, c = divmod(i, cols)
        xaxis = Axis.linear(0.0, float(plan.horizon), target=8,
                            title=_day_label(start) if i + cols >= n else "")
        xaxis.show_labels = i + cols >= n
        yaxis = Axis.linear(lo, hi, target=5, title=ylabel if c == 0 else "")
        yaxis.show_labels = c == 0
        cells[r][c] = Cell(xaxis, yaxis, short_name(name), colors[name], top)
    legend = Legend([Key("patch", "P10–P90 of each day (strategy colour)",
                         dict(fill="#777777", opacity=0.3)), *_path_keys(paths),
                     Key("line", level_key, level_style),
                     *([Key("line", demand_label(plan), _DEMAND_STYLE)] if demand else [])],
                    3, svg.WIDTH - 2 * svg.PAD)
    header = Header(title, legend)
    panels, height = svg.arrange(fid, cells, header.height, plot_height)
    for s, (panel, name) in enumerate(zip(panels, names)):
        color = colors[name]
        panel.band(days, values[s, :, 0], values[s, :, 2], color, _BAND_OPACITY,
                   tip=f"{name}: P10–P90 of each day")
        _draw_paths(panel, (paths or {}).get(name), which, color, name)
        panel.hline(level, level_css, **level_style)
        if demand:
            panel.line(demand_days, demand_values, "demand", **_DEMAND_STYLE)
    return svg.figure_svg(fid, label, height, [header.svg(), *(p.svg() for p in panels)])


def fan_chart(plan: CompiledScenario, bands: CapacityBands, colors: dict[str, str],
              paths: dict[str, list[ScenarioPath]] | None = None, start=None) -> str:
    """Total capacity per strategy: per-day P10-P90 band, whole scenarios (`paths`, exact step
    functions of continuous time), baseline and demand. `plan`, `bands` and `paths` may be
    their data stand-ins (PlanLines, BandArrays, PathLines): the same figure."""
    return _band_chart("fig-fan", "fan charts of capacity over time per strategy",
                       "Capacity in service C(t): per-day P10–P90 band and whole scenarios, "
                       "against baseline and demand", plan, bands, colors, paths, start,
                       "total", float(plan.baseline), "baseline", _BASELINE_STYLE,
                       f"baseline {plan.baseline:,.0f}", "capacity (H100-eq)", 200.0, True)


def largest_island_chart(plan: CompiledScenario, bands: CapacityBands,
                         colors: dict[str, str],
                         paths: dict[str, list[ScenarioPath]] | None = None,
                         start=None) -> str:
    """The largest island's capacity per strategy against the largest job's size: per-day
    P10-P90 band and whole scenarios (`paths`); data stand-ins as for fan_chart."""
    return _band_chart("fig-island", "largest island capacity over time",
                       "Largest island's capacity: can the largest job still run?", plan, bands,
                       colors, paths, start, "largest", float(plan.largest_job), "largest-job",
                       _JOB_STYLE, f"largest job {plan.largest_job:,.0f}",
                       "largest island (H100-eq)", 170.0, False)


_DASH = 5.0 * PT                 # the dash length of curves drawn over each other


def _widths(n: int) -> list[float]:
    """Line widths (points) in drawing order, widest first: a curve drawn over an earlier one
    that runs close to it leaves the earlier one showing at its edges."""
    step = min(0.8, 3.2 / max(n - 1, 1))
    return [1.2 + step * (n - 1 - s) for s in range(n)]


def _same_curves(curves: list[np.ndarray]) -> list[list[int]]:
    """Indices of identical curves, grouped (each group in order, groups by first member)."""
    groups: dict[bytes, list[int]] = {}
    for s, curve in enumerate(curves):
        groups.setdefault(np.ascontiguousarray(curve).tobytes(), []).append(s)
    return list(groups.values())


def _draw_curves(panel, table: data.MetricCurves, names: tuple[str, ...],
                 colors: dict[str, str], hi: float, exceed: bool) -> list[str]:
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
                dash=f"{_DASH:.1f} {_DASH * (len(group) - 1):.1f}", offset=j * _DASH)
            width = widths[group[0]] if len(group) > 1 else widths[s]
            panel.step(x, y, "curve", names[s], color=colors[names[s]], width=width * PT,
                       **style)
        who = _names_in_a_note([names[s] for s in group])
        value = table.constant[group[0]]
        if value is not None:                                # a step at one value
            many = f"{len(group)} strategies" if len(group) > 1 else "1 strategy"
            dashed = " (drawn dashed, one over the other)" if len(group) > 1 else ""
            notes.append(f"{many} at {value:,.4g} in every scenario{dashed}: {who}")
        elif len(group) > 1:
            notes.append(f"{len(group)} strategies with the same curve (dashed): {who}")
    return notes


def _with_notes(label: str, notes: list[str], width: float) -> list[str]:
    """An x label with the notes under it, every line no wider than `width` pixels."""
    return [line for text in (label, *notes) for line in svg.wrap(text, width, svg.LABEL_SIZE)]


def _strategy_keys(names: tuple[str, ...], colors: dict[str, str]) -> list[Key]:
    return [Key("line", short_name(name, 28), dict(color=colors[name], width=width * PT))
            for name, width in zip(names, _widths(len(names)))]


def _curve_x(lo: float, hi: float) -> tuple[float, float]:
    return svg.padded(lo, hi)


def _probability_axis(title: str) -> Axis:
    ticks = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    return Axis(-0.02, 1.02, ticks, [svg.percent(t) for t in ticks], [title])


def exceedance_of(table: dict[str, data.MetricCurves], names: tuple[str, ...],
                  colors: dict[str, str], panels: tuple[tuple[str, str], ...],
                  title: str) -> str:
    """P(metric > x) per strategy, one panel per (metric, x-axis label), from each panel's
    curves (data.curve_table of the metrics)."""
    fid = "fig-exceed-" + "-".join(m for m, _ in panels)
    legend = Legend([*_strategy_keys(names, colors),
                     Key("line", "1 in 10: a curve crosses it at its P90", _LEVEL_STYLE)],
                    min(len(names) + 1, _LEGEND_COLUMNS), svg.WIDTH - 2 * svg.PAD)
    header = Header(title, legend)
    room = (svg.WIDTH - 2 * svg.PAD) / len(panels) - (90 if len(panels) > 1 else 120)
    cells = []
    for metric, xlabel in panels:
        curves = table[metric]
        lo, hi = _curve_x(curves.lo, curves.hi)
        probe = svg.Panel("", 0, 0, 1, 1, Axis.linear(lo, hi), _probability_axis(""))
        notes = _draw_curves(probe, curves, names, colors, curves.hi, True)   # its notes
        cells.append(Cell(Axis.linear(lo, hi, svg.compact, target=8 if len(panels) == 1 else 7,
                                      title=_with_notes(xlabel, notes, room)),
                          _probability_axis("probability of exceeding")))
    placed, height = svg.arrange(fid, [cells], header.height, 180.0)
    for panel, (metric, _) in zip(placed, panels):
        _draw_curves(panel, table[metric], names, colors, table[metric].hi, True)
        panel.hline(0.10, "level", **_LEVEL_STYLE)
    label = title if len(panels) > 1 else f"exceedance curve: {title}"
    return svg.figure_svg(fid, label, height, [header.svg(), *(p.svg() for p in placed)])


def completion_of(curves: data.MetricCurves, names: tuple[str, ...], colors: dict[str, str],
                  horizon: float, axis: CompletionAxis, start=None) -> str:
    """S-curves: P(completion_day <= x) per strategy, from completion_day's curves
    (data.curve_table), the day axis cut as `axis` (data.completion_axis) says."""
    fid = "fig-completion"
    lo = curves.lo
    left = min(lo, horizon)
    x_lo = left - max(1.0, 0.02 * (axis.right - left))
    label = axis_label("completion_day")
    if start is not None:
        label += f"; top: dates, day 0 = {start.isoformat()}"
    if axis.cut:
        label += (f"; axis cut at day {axis.right:,.0f}: later completions, up to day "
                  f"{axis.latest:,.0f}, are off the chart")
    probe = svg.Panel("", 0, 0, 1, 1, Axis.linear(x_lo, axis.right), _probability_axis(""))
    notes = _draw_curves(probe, curves, names, colors, max(curves.hi, axis.right), False)
    cell = Cell(Axis.linear(x_lo, axis.right, target=8,
                            title=_with_notes(label, notes, svg.WIDTH - 120)),
                _probability_axis("probability done by then"),
                top_ticks=date_ticks(start, x_lo, axis.right))
    legend = Legend([*_strategy_keys(names, colors),
                     Key("line", f"horizon H = {horizon:,.0f} days", _BASELINE_STYLE),
                     Key("line", "50% and 90%", _LEVEL_STYLE)],
                    min(len(names) + 2, _LEGEND_COLUMNS), svg.WIDTH - 2 * svg.PAD)
    header = Header("Completion S-curves (ECDF of completion_day)", legend)
    (panel,), height = svg.arrange(fid, [[cell]], header.height, 180.0)
    _draw_curves(panel, curves, names, colors, max(curves.hi, axis.right), False)
    panel.vline(horizon, "horizon", f"horizon: day {horizon:,.0f}", **_BASELINE_STYLE)
    for level in (0.5, 0.9):
        panel.hline(level, "level", **_LEVEL_STYLE)
    return svg.figure_svg(fid, "completion S-curves", height, [header.svg(), panel.svg()])


# The power chart draws at most this many halls, those nearest their caps (the report's table
# lists every hall), three a row; and each strategy's bar with its name takes this many
# pixels, so that a hundred strategies' names stay apart.
_POWER_PANELS = 12
_BAR_PITCH = 17.0


def _halls_to_draw(power: dict, names: list[str]) -> list[int]:
    """The indices of the halls the power chart draws, in file order: every hall, or the
    _POWER_PANELS whose highest P90 peak is nearest their cap (as a share of it)."""
    halls = len(power[names[0]]) if names else 0
    if halls <= _POWER_PANELS:
        return list(range(halls))
    share = [max(power[n][h].peak_p90_kw for n in names) / power[names[0]][h].cap_kw
             for h in range(halls)]
    return sorted(sorted(range(halls), key=lambda h: -share[h])[:_POWER_PANELS])


def power_chart(power: dict[str, list[HallPower]], colors: dict[str, str]) -> str:
    """P90 peak draw per hall and strategy against each hall's cap (HallPower rows or their
    data.PowerRow stand-ins), one panel per hall, three a row."""
    fid = "fig-power"
    names = list(power)
    drawn = _halls_to_draw(power, names)
    total = len(power[names[0]]) if names else 0
    cols = min(3, len(drawn)) if len(drawn) > 3 else max(1, len(drawn))
    rows = math.ceil(len(drawn) / cols) if drawn else 1
    title = "Power check per hall: peak IT draw against the cap"
    if len(drawn) < total:
        title += f" (the {len(drawn)} of {total:,} halls nearest their caps)"
    header = Header(title)
    n = len(names)
    categories = [short_name(name, 24) for name in names]
    cells: list[list[Cell | None]] = [[None] * cols for _ in range(rows)]
    legends = []
    cell_room = (svg.WIDTH - 2 * svg.PAD) / cols - 60
    for i, h in enumerate(drawn):
        hall_rows = [power[name][h] for name in names]
        cap = hall_rows[0].cap_kw
        top = max([cap, *(r.peak_max_kw for r in hall_rows), *(r.peak_p90_kw for r in hall_rows)])
        xlabel = svg.wrap(f"hall {short_name(hall_rows[0].hall, 24)}: P90 peak draw (kW)",
                          cell_room, svg.LABEL_SIZE)
        yaxis = Axis(n - 0.5, -0.5, list(range(n)), [])
        legend = Legend([Key("tick", "highest in any scenario"),
                         Key("line", f"cap {cap:,.0f} kW", dict(color="#B00020", width=1.5 * PT))],
                        2 if len(drawn) <= 2 else 1, cell_room, size=svg.KEY_SIZE * 0.85)
        legends.append(legend)
        cells[i // cols][i % cols] = Cell(Axis.linear(0.0, top * 1.05 if top > 0 else 1.0, target=7,
                                                      title=xlabel),
                                          yaxis, grid="x", categories=categories,
                                          under=legend.height + svg.GAP / 2)
    panels, height = svg.arrange(fid, cells, header.height, max(200.0, _BAR_PITCH * n))
    parts = [header.svg()]
    for h, panel, legend in zip(drawn, panels, legends):
        hall_rows = [power[name][h] for name in names]
        for k, (name, row) in enumerate(zip(names, hall_rows)):
            y0, y1 = float(panel.Y(k - 0.4)), float(panel.Y(k + 0.4))
            x0, x1 = float(panel.X(0.0)), float(panel.X(row.peak_p90_kw))
            panel.raw(f'<rect class="bar" x="{svg.num(x0)}" y="{svg.num(min(y0, y1))}" '
                      f'width="{svg.num(max(x1 - x0, 0.0))}" height="{svg.num(abs(y1 - y0))}" '
                      f'fill="{colors[name]}" fill-opacity="0.85"><title>'
                      f'{svg.esc(name)}: P90 peak {row.peak_p90_kw:,.0f} kW</title></rect>')
            mx = svg.num(float(panel.X(row.peak_max_kw)))
            ym = float(panel.Y(k))
            panel.raw(f'<line class="highest" x1="{mx}" x2="{mx}" y1="{svg.num(ym - 10)}" '
                      f'y2="{svg.num(ym + 10)}" stroke="black" stroke-width="2"><title>'
                      f'{svg.esc(name)}: highest {row.peak_max_kw:,.0f} kW</title></line>')
        panel.vline(hall_rows[0].cap_kw, "cap", f"cap {hall_rows[0].cap_kw:,.0f} kW",
                    color="#B00020", width=1.5 * PT)
        parts.append(panel.svg())
        parts.append(legend.svg(panel.x + panel.w / 2,
                                panel.y + panel.h + panel.room_below() + svg.GAP / 2))
    return svg.figure_svg(fid, "peak power draw per hall", height, parts)
