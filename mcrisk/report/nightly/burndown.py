"""The risk burn-down: the executing plan's P90 completion, P90 trough depth and cost (mean and
P90) over the nights of a history, against the status date, with their 95% intervals.

Read from the registered nights' summary.json (like the trend: a few kB a night, and it works
once --keep-large has deleted the large files) and tonight's. x is each night's status date
(as_of, a day of the plan) when every night drawn had a status; otherwise the night's own date
(from its run id), for every night, so that one axis never mixes the two. The intervals are
summary.json's p90_ci; a mean has no interval there and is drawn without one. Drawn as an
inline SVG (vector: sharp at 1,280 px and in print), 12.8 x 3.8 inches.
"""
from __future__ import annotations

import datetime as _dt
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from .night import NightUnreadable, read_summary
from .trend import LITERAL_TEXT, MAX_NIGHTS
from ..text import visible

PANELS = (("completion_day", ("p90",), "P90 completion (day)"),
          ("trough_depth", ("p90",), "P90 trough depth (H100-eq)"),
          ("cost_total", ("mean", "p90"), "cost, mean and P90 (USD)"))


@dataclass(frozen=True)
class BurnNight:
    run_id: str
    as_of: float | None
    values: dict        # {(metric, stat): (value, [low, high] or None)}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def burn_night(run_id: str, summary: dict, strategy: str) -> BurnNight | None:
    per = summary.get("strategies", {}).get(strategy)
    if not isinstance(per, dict):
        return None
    values = {}
    for metric, stats, _ in PANELS:
        block = per.get(metric) if metric in per else (per.get("costs") or {}).get(metric)
        if not isinstance(block, dict):
            continue
        for stat in stats:
            ci = block.get("p90_ci") if stat == "p90" else None
            ok = isinstance(ci, list) and len(ci) == 2 and all(_number(e) for e in ci)
            if _number(block.get(stat)):
                values[(metric, stat)] = (float(block[stat]), ci if ok else None)
    status = summary.get("status")
    as_of = status.get("as_of") if isinstance(status, dict) else None
    return BurnNight(run_id, float(as_of) if _number(as_of) else None, values)


def read_burndown(history: Path, entries: list[dict], tonight_id: str, tonight_summary: dict,
                  strategy: str) -> tuple[list[BurnNight], list[str]]:
    """(nights oldest first, notes): the executing plan's figures per night; a night whose
    summary.json cannot be read, or that did not run the plan, is left out with a note."""
    nights, notes = [], []
    for entry in list(entries)[-(MAX_NIGHTS - 1):]:
        try:
            summary = read_summary(history / entry["folder"])
        except NightUnreadable as why:
            notes.append(visible(f"burn-down: {entry['id']} left out: {why}"))
            continue
        night = burn_night(entry["id"], summary, strategy)
        if night is None:
            notes.append(visible(f"burn-down: {entry['id']} left out: it did not run {strategy}"))
        else:
            nights.append(night)
    tonight = burn_night(tonight_id, tonight_summary, strategy)
    if tonight is not None:
        nights.append(tonight)
    return nights, notes


def _night_date(run_id: str) -> _dt.datetime | None:
    m = re.match(r"(\d{4}-\d{2}-\d{2})T(\d{2})(\d{2})(\d{2})Z", run_id)
    if not m:
        return None
    return _dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}:{m.group(3)}:{m.group(4)}")


def burndown_svg(nights: list[BurnNight], strategy: str, color: str = "#1f77b4") -> str:
    """The burn-down as inline SVG markup (the XML prolog dropped)."""
    by_status = all(n.as_of is not None for n in nights)
    xs = [n.as_of if by_status else _night_date(n.run_id) for n in nights]
    if not by_status and any(x is None for x in xs):
        xs = list(range(len(nights)))
    with matplotlib.rc_context({**LITERAL_TEXT, "svg.fonttype": "none"}):
        fig = Figure(figsize=(12.8, 3.8))
        axes = fig.subplots(1, len(PANELS), squeeze=False)[0]
        for ax, (metric, stats, title) in zip(axes, PANELS):
            for stat, style in zip(stats, ("-", "--")):
                points = [(x, n.values.get((metric, stat))) for x, n in zip(xs, nights)]
                points = [(x, v) for x, v in points if v is not None]
                if not points:
                    continue
                x = [p[0] for p in points]
                y = [p[1][0] for p in points]
                ax.plot(x, y, style, marker="o", color=color, linewidth=1.6, markersize=4,
                        label=stat.upper() if len(stats) > 1 else None)
                ci = [(p[0], p[1][1]) for p in points if p[1][1] is not None]
                if ci:
                    ax.fill_between([c[0] for c in ci], [c[1][0] for c in ci],
                                    [c[1][1] for c in ci], color=color, alpha=0.18, linewidth=0)
            ax.set_title(title, fontsize=11)
            ax.set_xlabel("status date (day of the plan)" if by_status else "night", fontsize=10)
            ax.tick_params(labelsize=9)
            ax.grid(alpha=0.3)
            if len(stats) > 1 and ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=9, frameon=False)
            if metric == "cost_total":
                ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                    lambda v, _: f"${v / 1e6:,.1f}M"))
        fig.suptitle(f"Risk burn-down of {visible(strategy)} over {len(nights)} night"
                     f"{'s' if len(nights) != 1 else ''} (shaded: 95% interval of the P90)",
                     fontsize=12)
        fig.tight_layout()
        if not by_status:
            fig.autofmt_xdate()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]
