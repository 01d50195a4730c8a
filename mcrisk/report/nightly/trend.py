"""The trend across a nightly history: each strategy's P90 of the key metrics, night by night.

Read from the history's summary.json files (the registered runs of tonight's scenario name,
oldest first, and tonight's own), so it costs a few kB per night and works on nights whose
metrics.parquet --keep-large has deleted. A night whose summary.json is missing or damaged is
left out with a note; at most MAX_NIGHTS nights are drawn (the latest), and the caption says
how many older ones are not.

The chart (trend_chart): one small panel per metric (P90 trough depth, trough days,
shortfall, completion day), x = night, one line per strategy of tonight's run with its 95%
interval shaded (summary.json's p90_ci), and a dotted vertical line before each night whose
scenario file differs from the night before it. Laid out once and drawn once, as the run's
figures are (report.figures.layout).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from ...core.labels import heading
from ..figures import layout
from ..figures.charts import short_name
from .diff import NightUnreadable, read_summary
from ..text import visible

# Each panel's metric and its title (the P90 of the metric's heading, core.labels).
TREND_METRICS = tuple((m, f"P90 {heading(m, typeset=True)}")
                      for m in ("trough_depth", "trough_days", "shortfall_gpu_days",
                                "completion_day"))
MAX_NIGHTS = 90
_CHANGED_STYLE = dict(color="#888888", linewidth=0.9, linestyle=":")
_COMPACT = FuncFormatter(lambda x, _: (f"{x / 1e6:,.3g}M" if abs(x) >= 1e6 else
                                       f"{x / 1e3:,.3g}k" if abs(x) >= 1e4 else f"{x:,.0f}"))


@dataclass(frozen=True)
class TrendNight:
    run_id: str
    scenario_sha256: str | None
    p90: dict           # {strategy: {metric: (p90 or None, [low, high] or None)}}


@dataclass(frozen=True)
class Trend:
    nights: tuple[TrendNight, ...]      # oldest first; tonight last
    notes: tuple[str, ...]              # nights left out, and why


def _is_number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def trend_night(run_id: str, summary: dict) -> TrendNight:
    """The P90s (and their intervals) of one night's summary.json, for the trend metrics."""
    p90 = {}
    for name, metrics in summary["strategies"].items():
        per = {}
        for metric, _ in TREND_METRICS:
            found = metrics.get(metric) if isinstance(metrics, dict) else None
            found = found if isinstance(found, dict) else {}
            value = found.get("p90")
            ci = found.get("p90_ci")
            ok = isinstance(ci, list) and len(ci) == 2 and all(_is_number(e) for e in ci)
            per[metric] = (float(value) if _is_number(value) else None,
                           [float(e) for e in ci] if ok else None)
        p90[name] = per
    sha = summary.get("scenario_sha256")
    return TrendNight(run_id, sha if isinstance(sha, str) else None, p90)


def read_trend(history: Path, entries: list[dict], tonight_id: str, tonight_summary: dict,
               limit: int = MAX_NIGHTS) -> Trend:
    """The trend of tonight's scenario: `entries` are the earlier registered runs of the same
    scenario name (index.json entries, in any order of the index: oldest first here), read
    newest first until `limit` nights (tonight included) are found."""
    nights, notes = [trend_night(tonight_id, tonight_summary)], []
    earlier = list(entries)
    while earlier and len(nights) < limit:
        entry = earlier.pop()
        try:
            summary = read_summary(history / entry["folder"])
        except NightUnreadable as why:
            notes.append(visible(f"trend: {entry['id']} left out: {why}"))
            continue
        nights.append(trend_night(entry["id"], summary))
    if earlier:
        notes.append(f"trend: the latest {len(nights)} nights are shown; {len(earlier)} older "
                     f"night{'s' if len(earlier) != 1 else ''} of this history "
                     f"{'are' if len(earlier) != 1 else 'is'} not (at most {limit})")
    return Trend(tuple(reversed(nights)), tuple(reversed(notes)))


def _short(text: str, limit: int = 28) -> str:
    text = visible(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _tick_labels(run_ids: list[str]) -> list[str]:
    """Run ids as tick labels: 2026-12-02T031500Z -> 12-02 03:15 (with the year when the
    nights span more than one; a -2 suffix kept), other ids as they are, shortened."""
    ids = [visible(run_id) for run_id in run_ids]
    dated = [len(r) >= 18 and r[4] == "-" and r[10] == "T" and r[17] == "Z" for r in ids]
    years = {r[:4] for r, d in zip(ids, dated) if d}
    minutes = [r[:15] for r, d in zip(ids, dated) if d]
    seconds = len(set(minutes)) < len(minutes)      # two nights within a minute: show seconds
    labels = []
    for rid, is_dated in zip(ids, dated):
        if is_dated:
            day = rid[:10] if len(years) > 1 else rid[5:10]
            time = f"{rid[11:13]}:{rid[13:15]}" + (f":{rid[15:17]}" if seconds else "")
            labels.append(f"{day} {time}{rid[18:]}")
        else:
            labels.append(_short(rid, 16))
    return labels


def _series(trend: Trend, name: str, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    value, low, high = [], [], []
    for night in trend.nights:
        p90, ci = night.p90.get(name, {}).get(metric, (None, None))
        value.append(math.nan if p90 is None else p90)
        low.append(math.nan if ci is None else ci[0])
        high.append(math.nan if ci is None else ci[1])
    return np.array(value), np.array(low), np.array(high)


def changed_nights(trend: Trend) -> list[int]:
    """Positions of the nights whose scenario file differs from the night drawn before."""
    return [i for i in range(1, len(trend.nights))
            if trend.nights[i].scenario_sha256 != trend.nights[i - 1].scenario_sha256]


LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}   # ids drawn as written


def trend_chart(trend: Trend, names: tuple[str, ...], colors: dict[str, str]) -> bytes:
    """The trend as PNG bytes: one panel per metric of TREND_METRICS, x = night. Text is
    literal while the figure is made and drawn (tick labels are made when drawn)."""
    with matplotlib.rc_context(LITERAL_TEXT):
        buffer = io.BytesIO()
        trend_figure(trend, names, colors).savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()


def trend_figure(trend: Trend, names, colors) -> Figure:
    """The trend chart as a laid-out Figure (make and draw it under LITERAL_TEXT)."""
    n = len(trend.nights)
    x = np.arange(n)
    fig = Figure(figsize=(13, 3.6))
    axes = fig.subplots(1, len(TREND_METRICS), squeeze=False)
    step = min(0.8, 3.2 / max(len(names) - 1, 1))
    widths = [1.2 + step * (len(names) - 1 - s) for s in range(len(names))]   # widest first
    labels = _tick_labels([night.run_id for night in trend.nights])
    every = max(1, math.ceil(n / 12))
    for ax, (metric, title) in zip(axes.flat, TREND_METRICS):
        drawn: dict[bytes, list[int]] = {}
        for s, name in enumerate(names):
            value, low, high = _series(trend, name, metric)
            key = value.tobytes()
            drawn.setdefault(key, []).append(s)
        for group in drawn.values():
            for j, s in enumerate(group):
                value, low, high = _series(trend, names[s], metric)
                color = colors[names[s]]
                style = {} if len(group) == 1 else dict(
                    linestyle=(j * 4.0, (4.0, 4.0 * (len(group) - 1))))
                ax.plot(x, value, color=color, linewidth=widths[group[0]], marker="o",
                        markersize=3, **style)
                ax.fill_between(x, low, high, color=color, alpha=0.12, linewidth=0)
        for i in changed_nights(trend):
            ax.axvline(i - 0.5, **_CHANGED_STYLE)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(x[::every])
        ax.set_xticklabels(labels[::every], rotation=60, ha="right", fontsize=8)
        ax.set_xlim(-0.5, n - 0.5)
        ax.yaxis.set_major_formatter(_COMPACT)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=colors[name], linewidth=w) for name, w in zip(names, widths)]
    legend = [short_name(name, 28) for name in names]
    if changed_nights(trend):
        handles.append(Line2D([], [], **_CHANGED_STYLE))
        legend.append("scenario file changed")
    def key(ncol: int):
        return fig.legend(handles, legend, loc="upper center", ncol=ncol, fontsize=9,
                          frameon=False)

    measure = layout.Measure(fig)
    top = layout.header(fig, measure, f"P90 per night, last {n} night{'s' if n != 1 else ''} "
                        "(shaded: its 95% interval)", 12, key, ncol=min(len(legend), 6))
    layout.arrange(fig, axes, measure, top)
    return fig
