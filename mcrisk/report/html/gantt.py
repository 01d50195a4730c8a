"""A probabilistic Gantt chart per strategy: each milestone's P10-P90 as a bar with its P50
marked, grouped (shipments, islands, halls and rows, drain waves, completion), over the days
when capacity is below baseline in at least 10% / 50% of scenarios (the capacity bands'
P(C(d) < B)). Per-unit milestones are collapsed into their waves; with start_date the day
axis shows calendar dates. With a status, a milestone reached by as_of is a fact: a diamond
on its actual day, labelled "actual", instead of a bar, and a line marks the status date.
Drawn as inline SVG: a few hundred elements per strategy, built as text in milliseconds
(matplotlib took about half a second a chart), sharp at any zoom.
"""
from __future__ import annotations

import datetime as _dt
import math
from html import escape

import numpy as np

from ..text import visible

CRITICAL = 0.5                      # bars at or above this criticality are drawn as critical
_BAR = "#8FA8C2"                    # any strategy: the strategy colours include oranges
_CRITICAL_BAR = "#B2182B"
_ACTUAL = "#1B7837"                 # a milestone reached by the status date, and that date
_SHADE = "#999999"
_GROUP_ORDER = ("shipment", "island", "hall", "drain wave", "completion")
_WIDTH, _LABELS, _RIGHT, _ROW, _TOP = 1100, 270, 20, 18, 30


def gantt_rows(items: list[dict]) -> list[tuple[str, list[dict]]]:
    """Wave-level milestones with a P10 and P90, as (group, milestones), groups in
    _GROUP_ORDER then first appearance, milestones in definition order."""
    groups: dict[str, list[dict]] = {}
    for m in items:
        if m["level"] == "wave" and m["p10"] is not None and m["p90"] is not None:
            groups.setdefault(m["group"], []).append(m)

    def order(name: str) -> int:
        return next((k for k, g in enumerate(_GROUP_ORDER) if name.startswith(g)),
                    len(_GROUP_ORDER))
    return sorted(groups.items(), key=lambda kv: order(kv[0]))


def _text(value) -> str:
    return escape(visible(value), quote=True)


def day_ticks(lo: float, hi: float, target: int = 8) -> list[float]:
    """Round day numbers spanning [lo, hi], about `target` of them."""
    span = max(hi - lo, 1.0)
    raw = span / target
    step = min((s for s in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)
                if s >= raw), default=10 ** math.ceil(math.log10(raw)))
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) // step) + 1)]


# Months between date ticks: monthly to yearly, then every few years for a long axis.
_TICK_MONTHS = (1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200, 2400, 6000, 12000)


def date_ticks(start: _dt.date, lo: float, hi: float, target: int = 8):
    """(day, label) at the first of every 1, 2, 3, 6 or 12 months (every few years on an
    axis of more than 8 years) within [lo, hi], about `target` of them. Only days that are
    dates get a tick: an axis that reaches past the calendar's ends (0001-01-01, 9999-12-31)
    has none there."""
    lo = max(lo, float((_dt.date.min - start).days))
    hi = min(hi, float((_dt.date.max - start).days))
    if hi < lo:
        return []
    months = max(1.0, (hi - lo) / 30.44)
    every = next((m for m in _TICK_MONTHS if months / m <= target), _TICK_MONTHS[-1])
    first = start + _dt.timedelta(days=math.ceil(lo))
    last = start + _dt.timedelta(days=math.floor(hi))
    month = -(-(first.year * 12 + first.month - 1) // every) * every   # months since year 0
    ticks = []
    while month // 12 <= last.year:
        when = _dt.date(month // 12, month % 12 + 1, 1)
        if when > last:
            break
        if when >= first:
            label = when.strftime("%b %Y") if when.month == 1 or not ticks else \
                when.strftime("%b")
            ticks.append((float((when - start).days), label))
        month += every
    return ticks


def gantt_svg(strategy: str, items: list[dict], days: np.ndarray, p_below: np.ndarray,
              start_date: _dt.date | None, as_of: float | None = None) -> str:
    """One strategy's Gantt as an SVG element (items: summary.json's milestones of the
    strategy; days, p_below: the capacity bands' days and P(C(d) < baseline); as_of: a
    status's day, marked, its reached milestones drawn as diamonds on their actual day)."""
    rows = gantt_rows(items)
    n_rows = sum(len(ms) + 1 for _, ms in rows)
    plot_h = n_rows * _ROW
    height = _TOP + plot_h + 80
    p_below = np.asarray(p_below, dtype=float)
    days = np.asarray(days, dtype=float)
    shaded = days[p_below >= 0.1]
    values = [m[k] for _, ms in rows for m in ms for k in ("p10", "p90")]
    values += [as_of] if as_of is not None else []
    lo = min(values + ([float(shaded.min())] if shaded.size else []) + [0.0])
    hi = max(values + ([float(shaded.max()) + 1] if shaded.size else []) + [lo + 1])
    pad = (hi - lo) * 0.02
    lo, hi = lo - pad, hi + pad
    x0, x1 = _LABELS, _WIDTH - _RIGHT

    def x(day: float) -> float:
        return x0 + (day - lo) / (hi - lo) * (x1 - x0)

    out = [f'<svg class="gantt" xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" '
           f'height="{height}" viewBox="0 0 {_WIDTH} {height}" role="img" '
           f'aria-label="milestone Gantt chart of {_text(strategy)}" '
           'font-family="sans-serif" font-size="11">',
           f'<text x="{x0}" y="16" font-size="13">{_text(strategy)}: milestones, P10-P90 '
           'bar, P50 marked</text>']
    for share, opacity in ((0.1, 0.15), (0.5, 0.3)):
        for a, b in _runs(p_below >= share):
            out.append(f'<rect x="{x(days[a]):.1f}" y="{_TOP}" '
                       f'width="{x(days[b] + 1) - x(days[a]):.1f}" height="{plot_h}" '
                       f'fill="{_SHADE}" fill-opacity="{opacity}"/>')
    ticks = (date_ticks(start_date, lo, hi) if start_date else
             [(t, f"{t:,.0f}") for t in day_ticks(lo, hi)])
    for day, label in ticks:
        out.append(f'<line x1="{x(day):.1f}" x2="{x(day):.1f}" y1="{_TOP}" '
                   f'y2="{_TOP + plot_h + 4}" stroke="#e4e4e4"/>'
                   f'<text x="{x(day):.1f}" y="{_TOP + plot_h + 17}" '
                   f'text-anchor="middle">{_text(label)}</text>')
    y = _TOP
    for group, ms in rows:
        if y > _TOP:
            out.append(f'<line x1="4" x2="{x1}" y1="{y}" y2="{y}" stroke="#cccccc"/>')
        out.append(f'<text x="{x0 - 8}" y="{y + 13}" text-anchor="end" font-weight="bold">'
                   f'{_text(group.upper())}</text>')
        y += _ROW
        for m in ms:
            if m.get("actual"):
                out.append(_actual_mark(m, x(m["actual_day"]), x0, y))
                y += _ROW
                continue
            color = _CRITICAL_BAR if m["criticality"] >= CRITICAL else _BAR
            left, right = x(m["p10"]), x(m["p90"])
            out.append(f'<text x="{x0 - 8}" y="{y + 13}" text-anchor="end">'
                       f'{_text(m["name"])}</text>'
                       f'<rect x="{left:.1f}" y="{y + 4}" width="{max(right - left, 1.0):.1f}" '
                       f'height="11" fill="{color}"><title>{_text(m["name"])}: P10 '
                       f'{m["p10"]:,.1f}, P50 {m["p50"]:,.1f}, P90 {m["p90"]:,.1f}, critical '
                       f'in {m["criticality"]:.1%}</title></rect>'
                       f'<line x1="{x(m["p50"]):.1f}" x2="{x(m["p50"]):.1f}" y1="{y + 1}" '
                       f'y2="{y + 18}" stroke="black" stroke-width="2.5"/>')
            y += _ROW
    if as_of is not None:
        out.append(f'<line x1="{x(as_of):.1f}" x2="{x(as_of):.1f}" y1="{_TOP}" '
                   f'y2="{_TOP + plot_h}" stroke="{_ACTUAL}" stroke-width="1.5" '
                   f'stroke-dasharray="4 3"><title>status date: day {as_of:,.1f}</title></line>')
    out.append(f'<rect x="{x0}" y="{_TOP}" width="{x1 - x0}" height="{plot_h}" fill="none" '
               'stroke="#333333"/>')
    axis = (f"date (day 0 = {start_date.isoformat()})" if start_date else "day")
    out.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{_TOP + plot_h + 33}" '
               f'text-anchor="middle">{_text(axis)}</text>')
    legend = ((_BAR, 1.0, "P10-P90"),
              (_CRITICAL_BAR, 1.0, f"P10-P90, on the critical path in >= {CRITICAL:.0%} "
                                   "of scenarios"),
              (_SHADE, 0.45, "capacity below baseline in >= 50% of scenarios"),
              (_SHADE, 0.15, "... in >= 10%"))
    lx, ly = x0, _TOP + plot_h + 52
    for color, opacity, label in legend:
        out.append(f'<rect x="{lx}" y="{ly}" width="14" height="10" fill="{color}" '
                   f'fill-opacity="{opacity}"/><text x="{lx + 19}" y="{ly + 9}">'
                   f'{_text(label)}</text>')
        lx += 30 + 5.4 * len(label)
    out.append(f'<line x1="{lx}" x2="{lx}" y1="{ly - 2}" y2="{ly + 12}" stroke="black" '
               f'stroke-width="2.5"/><text x="{lx + 7}" y="{ly + 9}">P50</text>')
    if as_of is not None:
        lx += 45
        out.append(f'<path d="M{lx + 6} {ly - 1} l6 6 l-6 6 l-6 -6 z" fill="{_ACTUAL}"/>'
                   f'<text x="{lx + 17}" y="{ly + 9}">actual (reached by the status date, '
                   f'the dashed line: day {as_of:,.1f})</text>')
    out.append("</svg>")
    return "".join(out)


def _actual_mark(m: dict, at: float, x0: float, y: float) -> str:
    """A milestone reached by the status date: its name with 'actual', a diamond on its day."""
    return (f'<text x="{x0 - 8}" y="{y + 13}" text-anchor="end">{_text(m["name"])} '
            f'(actual)</text><path d="M{at:.1f} {y + 3} l6 6.5 l-6 6.5 l-6 -6.5 z" '
            f'fill="{_ACTUAL}"><title>{_text(m["name"])}: actual, day '
            f'{m["actual_day"]:,.1f}</title></path>')


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) index of each run of True."""
    runs, start = [], None
    for k, on in enumerate(mask.tolist()):
        if on and start is None:
            start = k
        if not on and start is not None:
            runs.append((start, k - 1))
            start = None
    if start is not None:
        runs.append((start, len(mask) - 1))
    return runs


def _day_cell(value, start_date) -> str:
    from ...results.milestones import day_date, weekday

    if value is None:
        return "n/a"
    text = f"{value:,.1f}"
    iso = day_date(start_date, value)
    return f"{text}<br><small>{weekday(iso)} {iso}</small>" if iso else text


def schedule_html(run, colors: dict[str, str]) -> str:
    """The report's schedule section: per strategy its Gantt and a table of every milestone
    (waves first, per-unit lines folded away). Empty when the run has no milestones."""
    milestones = getattr(run.detail, "milestones", None) if run.detail is not None else None
    if not milestones:
        return ""
    from ...results.milestones import share_text

    start = run.scenario.start_date
    bands = run.detail.bands
    names = list(run.plan.strategy_names)
    as_of = milestones.get("as_of")
    parts = [f"<p>Each milestone's time over {milestones['samples']:,} scenarios: the bar "
             "runs from its P10 to its P90, the black tick is its P50; bars in red lie on "
             f"the critical path to completion in at least {CRITICAL:.0%} of scenarios. "
             "Shading: days on which capacity is below baseline in at least 10% (light) and "
             "50% (darker) of scenarios. Per-unit milestones are rolled up into waves in the "
             "chart; each table below lists them all. Critical: the share of scenarios in "
             "which the milestone lies on the critical path to completion (docs/metrics.md, "
             "Milestones)."
             + (f" Day 0 is {escape(start.isoformat())} ({start.strftime('%A')}); a day "
                "falls on the date shown." if start else "")
             + (f" Milestones reached by the status date (day {as_of:,.1f}, the dashed line) "
                "are facts, the same day in every world: a diamond on their actual day, "
                "'actual' in the tables." if as_of is not None else "") + "</p>"]
    for s, name in enumerate(names):
        items = milestones["strategies"][name]
        parts.append(f"<h3>{escape(visible(name))}</h3>")
        below = np.asarray(bands.p_below_baseline[s])
        shading = ("no shading: on every day capacity is below baseline in fewer than 10% of "
                   f"scenarios (at most {below.max():.1%})" if below.max() < 0.1 else
                   f"capacity below baseline in at least 10% of scenarios on "
                   f"{int((below >= 0.1).sum()):,} days, in at least 50% on "
                   f"{int((below >= 0.5).sum()):,} days")
        svg = gantt_svg(name, items, bands.days, bands.p_below_baseline[s], start, as_of)
        parts.append(f"<figure>{svg}"
                     f"<figcaption>{_text(name)}: milestones, P10-P90 with P50; "
                     f"{_text(shading)}.</figcaption></figure>")
        rows = []
        for level, title in (("wave", "waves, rows, halls, shipments"),
                             ("unit", "per unit")):
            body = "".join(_table_row(m, start, share_text) for m in items
                           if m["level"] == level)
            rows.append(f"<details{' open' if level == 'wave' else ''}><summary>"
                        f"{escape(visible(name))}: {title}</summary><table><tr><th>milestone"
                        "</th><th>P10</th><th>P50</th><th>P90</th><th>P90 95% CI</th>"
                        f"<th>critical</th></tr>{body}</table></details>")
        parts.extend(rows)
    return "".join(parts)


def _table_row(m: dict, start, share_text) -> str:
    """A milestone's row of the schedule table: its P10, P50, P90, interval and criticality,
    or, reached by the status date, 'actual' and its day across them."""
    name = f"<tr><td>{escape(visible(m['name']))}</td>"
    if m.get("actual"):
        return (name + f"<td>actual</td><td>{_day_cell(m['actual_day'], start)}</td>"
                "<td></td><td></td><td></td></tr>")
    return (name + f"<td>{_day_cell(m['p10'], start)}</td><td>{_day_cell(m['p50'], start)}</td>"
            f"<td>{_day_cell(m['p90'], start)}</td>"
            f"<td>{escape(_ci_text(m))}</td><td>{share_text(m['criticality'])}</td></tr>")


def _ci_text(m: dict) -> str:
    ci = m.get("p90_ci")
    return f"[{ci[0]:,.1f}, {ci[1]:,.1f}]" if ci else "n/a"
