"""A probabilistic Gantt chart per strategy: each milestone's P10-P90 as a bar with its P50
marked, grouped (shipments, halls and rows, islands, drain waves, completion), over the days
when capacity is below baseline in at least 10% / 50% of scenarios (the capacity bands'
P(C(d) < B)). Per-unit milestones are collapsed into their waves; with start_date the day
axis shows calendar dates.
"""
from __future__ import annotations

import datetime as _dt

import matplotlib

matplotlib.use("Agg")
import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from .figures import _literal_text, _png  # noqa: E402
from .text import visible  # noqa: E402

CRITICAL = 0.5                      # bars at or above this criticality are drawn as critical
_GROUP_ORDER = ("shipment", "island", "hall", "drain wave", "completion")


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


@_literal_text
def gantt_chart(strategy: str, items: list[dict], days: np.ndarray, p_below: np.ndarray,
                start_date: _dt.date | None, color: str) -> bytes:
    """PNG of one strategy's Gantt (items: summary.json's milestones of the strategy;
    days, p_below: the capacity bands' days and P(C(d) < baseline))."""
    rows = gantt_rows(items)
    labels, y = [], 0
    fig_height = 1.2 + 0.24 * (sum(len(ms) + 1 for _, ms in rows))
    fig, ax = plt.subplots(figsize=(11, fig_height))
    offset = mdates.date2num(_dt.datetime.combine(start_date, _dt.time())) if start_date else 0
    shade_days = np.asarray(days, dtype=float)
    for share, alpha in ((0.1, 0.12), (0.5, 0.22)):
        below = np.asarray(p_below) >= share
        for lo, hi in _runs(below):
            ax.axvspan(offset + shade_days[lo], offset + shade_days[hi] + 1, color="#999999",
                       alpha=alpha, linewidth=0, zorder=0)
    ticks, tick_labels, heads = [], [], []
    for group, ms in rows:
        heads.append(y)
        ticks.append(y)
        tick_labels.append(visible(group).upper())
        y += 1
        for m in ms:
            critical = m["criticality"] >= CRITICAL
            ax.barh(y, m["p90"] - m["p10"], left=offset + m["p10"], height=0.6,
                    color="#D55E00" if critical else color, alpha=0.85, zorder=2)
            ax.plot([offset + m["p50"]] * 2, [y - 0.38, y + 0.38], color="black", linewidth=2,
                    zorder=3)
            ticks.append(y)
            tick_labels.append(visible(m["name"]))
            y += 1
        labels.append(group)
    ax.set_yticks(ticks)
    ax.set_yticklabels(tick_labels, fontsize=8)
    for tick, position in zip(ax.get_yticklabels(), ticks):
        if position in heads:
            tick.set_fontweight("bold")
    for h in heads[1:]:
        ax.axhline(h - 0.5, color="#cccccc", linewidth=0.8, zorder=1)
    ax.set_ylim(y - 0.5, -0.7)
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    if start_date:
        ax.xaxis.set_major_locator(mdates.AutoDateLocator())
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(ax.xaxis.get_major_locator()))
        ax.set_xlabel(f"date (day 0 = {start_date.isoformat()})")
    else:
        ax.set_xlabel("day")
    ax.set_title(f"{visible(strategy)}: milestones, P10-P90 bar, P50 marked", fontsize=10,
                 loc="left")
    ax.legend(handles=[Patch(color=color, alpha=0.85, label="P10-P90"),
                       Patch(color="#D55E00", alpha=0.85,
                             label=f"P10-P90, on the critical path in >= {CRITICAL:.0%}"),
                       Line2D([], [], color="black", linewidth=2, label="P50"),
                       Patch(color="#999999", alpha=0.22,
                             label="capacity below baseline in >= 50% of scenarios"),
                       Patch(color="#999999", alpha=0.12, label="... in >= 10%")],
              fontsize=7, loc="upper center",
              bbox_to_anchor=(0.5, -0.75 / max(1.0, fig_height - 1.0)),
              ncol=3, frameon=False)
    return _png(fig)


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
    from ..milestones import day_date, weekday

    if value is None:
        return "n/a"
    text = f"{value:,.1f}"
    iso = day_date(start_date, value)
    return f"{text}<br><small>{weekday(iso)} {iso}</small>" if iso else text


def schedule_html(run, colors: dict[str, str]) -> str:
    """The report's schedule section: per strategy its Gantt and a table of every milestone
    (waves first, per-unit lines folded away). Empty when the run has no milestones."""
    from html import escape

    milestones = getattr(run.detail, "milestones", None) if run.detail is not None else None
    if not milestones:
        return ""
    from .html import _img

    start = run.scenario.start_date
    bands = run.detail.bands
    names = list(run.plan.strategy_names)
    parts = [f"<p>Each milestone's time over {milestones['samples']:,} scenarios: the bar "
             "runs from its P10 to its P90, the black tick is its P50; bars in orange lie on "
             f"the critical path to completion in at least {CRITICAL:.0%} of scenarios. "
             "Shading: days on which capacity is below baseline in at least 10% (light) and "
             "50% (darker) of scenarios. Per-unit milestones are rolled up into waves in the "
             "chart; each table below lists them all. Critical: the share of scenarios in "
             "which the milestone lies on the critical path to completion (docs/metrics.md, "
             "Milestones)."
             + (f" Day 0 is {escape(start.isoformat())} ({start.strftime('%A')}); a day "
                "falls on the date shown." if start else "") + "</p>"]
    for s, name in enumerate(names):
        items = milestones["strategies"][name]
        png = gantt_chart(name, items, bands.days, bands.p_below_baseline[s], start,
                          colors.get(name, "#0072B2"))
        parts.append(f"<h3>{escape(visible(name))}</h3>")
        parts.append(_img(png, f"milestone Gantt chart of {visible(name)}",
                          f"{visible(name)}: milestones, P10-P90 with P50"))
        rows = []
        for level, title in (("wave", "waves, rows, halls, shipments"),
                             ("unit", "per unit")):
            body = "".join(
                f"<tr><td>{escape(visible(m['name']))}</td>"
                f"<td>{_day_cell(m['p10'], start)}</td><td>{_day_cell(m['p50'], start)}</td>"
                f"<td>{_day_cell(m['p90'], start)}</td>"
                f"<td>{escape(_ci_text(m))}</td><td>{m['criticality']:.0%}</td></tr>"
                for m in items if m["level"] == level)
            rows.append(f"<details{' open' if level == 'wave' else ''}><summary>"
                        f"{escape(visible(name))}: {title}</summary><table><tr><th>milestone"
                        "</th><th>P10</th><th>P50</th><th>P90</th><th>P90 95% CI</th>"
                        f"<th>critical</th></tr>{body}</table></details>")
        parts.extend(rows)
    return "".join(parts)


def _ci_text(m: dict) -> str:
    ci = m.get("p90_ci")
    return f"[{ci[0]:,.1f}, {ci[1]:,.1f}]" if ci else "n/a"
