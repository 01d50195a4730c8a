"""Figures of the report as PNG bytes (matplotlib, Agg backend, no display needed).

One colour per strategy, in scenario order, the same in every figure. Distributions over
scenarios are drawn from 401 quantiles ('inverted_cdf'), so a figure costs the same at 10^3
and 10^6 samples. Every figure is drawn with mathtext and TeX off, so that names and ids are
shown as written: a `$` in a hall id is a dollar sign, not the start of a formula.
"""
from __future__ import annotations

import functools
import io
import math

import matplotlib

matplotlib.use("Agg")  # before pyplot: no display, no GUI toolkit
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, PercentFormatter  # noqa: E402

from ..backends.reference import demand_at  # noqa: E402
from ..compile import METRICS, CompiledScenario  # noqa: E402
from .bands import CapacityBands, HallPower  # noqa: E402
from .text import visible  # noqa: E402

# Okabe-Ito-like, distinguishable for most colour-blind readers, then tab10 for more.
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B",
            "#7F7F7F", "#BCBD22", "#17BECF")
_LEVELS = np.linspace(0.0, 1.0, 401)
_DPI = 100
_BASELINE_STYLE = dict(color="#444444", linestyle="--", linewidth=1.0)
_DEMAND_STYLE = dict(color="black", linestyle=":", linewidth=1.4)
_THOUSANDS = FuncFormatter(lambda x, _: f"{x:,.0f}")
# Large values as 200k, 1.5M, so that tick labels do not run into each other.
_COMPACT = FuncFormatter(lambda x, _: (f"{x / 1e6:,.3g}M" if abs(x) >= 1e6 else
                                       f"{x / 1e3:,.3g}k" if abs(x) >= 1e4 else f"{x:,.0f}"))


def _literal_text(draw):
    """Run a figure function with mathtext and usetex off for every text it creates.

    matplotlib reads text between two `$` as mathtext (and, with usetex, all of it as TeX);
    a user's `$x^$` would then raise inside savefig, after other files were written. Text
    objects take parse_math from rcParams when they are created, and savefig runs inside
    the function, so the context covers titles, labels, legends and tick labels alike.
    """
    @functools.wraps(draw)
    def literal(*args, **kwargs):
        with plt.rc_context({"text.parse_math": False, "text.usetex": False}):
            return draw(*args, **kwargs)
    return literal


def strategy_colors(names: tuple[str, ...]) -> dict[str, str]:
    """Colour of each strategy, by its position in the scenario."""
    return {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(names)}


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def _grid(n: int, width: float = 12.0, height: float = 3.2):
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width, height * rows), sharex=True,
                             sharey=True, squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def _short(name: str, limit: int = 40) -> str:
    """A strategy name as a label: on one line, invisible characters escaped, shortened."""
    name = visible(name)
    return name if len(name) <= limit else name[:limit - 1] + "…"


@_literal_text
def fan_chart(plan: CompiledScenario, bands: CapacityBands, colors: dict[str, str]) -> bytes:
    """Total capacity per strategy: P10-P90 band, P50 line, baseline and demand."""
    fig, axes = _grid(len(bands.strategy_names))
    days = bands.days
    demand = demand_at(plan, days.astype(float))
    for s, (ax, name) in enumerate(zip(axes, bands.strategy_names)):
        color = colors[name]
        ax.fill_between(days, bands.total[s, :, 0], bands.total[s, :, 2], step="post",
                        color=color, alpha=0.25, linewidth=0, label="P10–P90")
        ax.step(days, bands.total[s, :, 1], where="post", color=color, linewidth=1.8,
                label="P50")
        ax.axhline(plan.baseline, label=f"baseline {plan.baseline:,.0f}", **_BASELINE_STYLE)
        ax.plot(days, demand, label="demand", **_DEMAND_STYLE)
        ax.set_title(_short(name), color=color, fontsize=11, fontweight="bold")
        ax.grid(alpha=0.3)
        ax.yaxis.set_major_formatter(_THOUSANDS)
    _label_grid(axes, len(bands.strategy_names), "day of the plan", "capacity (H100-eq)")
    _key_legend(fig, "Capacity in service C(d): P10–P90 band and P50, against baseline and demand",
                [Line2D([], [], **_BASELINE_STYLE), Line2D([], [], **_DEMAND_STYLE)],
                [f"baseline {plan.baseline:,.0f}", "demand"])
    return _png(fig)


def _key_legend(fig, title: str, handles: list, labels: list[str]) -> None:
    """Title and a legend row (band, P50 in neutral grey, plus reference lines) above a grid."""
    rows = len([ax for ax in fig.axes if ax.get_visible()]) > 3
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.92 if rows else 0.86))
    fig.legend([Patch(color="#777777", alpha=0.3, linewidth=0), Line2D([], [], color="#555555",
                                                                       linewidth=1.8), *handles],
               ["P10–P90 (strategy colour)", "P50", *labels], loc="upper center",
               bbox_to_anchor=(0.5, 0.955 if rows else 0.93), ncol=2 + len(handles), fontsize=9,
               frameon=False)


@_literal_text
def largest_island_chart(plan: CompiledScenario, bands: CapacityBands,
                         colors: dict[str, str]) -> bytes:
    """The largest island's capacity per strategy against the largest job's size."""
    fig, axes = _grid(len(bands.strategy_names), height=2.8)
    days = bands.days
    for s, (ax, name) in enumerate(zip(axes, bands.strategy_names)):
        color = colors[name]
        ax.fill_between(days, bands.largest[s, :, 0], bands.largest[s, :, 2], step="post",
                        color=color, alpha=0.25, linewidth=0, label="P10–P90")
        ax.step(days, bands.largest[s, :, 1], where="post", color=color, linewidth=1.8,
                label="P50")
        ax.axhline(plan.largest_job, color="#B00020", linestyle="--", linewidth=1.0,
                   label=f"largest job {plan.largest_job:,.0f}")
        ax.set_title(_short(name), color=color, fontsize=11, fontweight="bold")
        ax.grid(alpha=0.3)
        ax.yaxis.set_major_formatter(_THOUSANDS)
    _label_grid(axes, len(bands.strategy_names), "day of the plan",
                "largest island (H100-eq)")
    _key_legend(fig, "Largest island's capacity: can the largest job still run?",
                [Line2D([], [], color="#B00020", linestyle="--", linewidth=1.0)],
                [f"largest job {plan.largest_job:,.0f}"])
    return _png(fig)


def _label_grid(axes, n: int, xlabel: str, ylabel: str) -> None:
    cols = min(3, n)
    rows = math.ceil(n / cols)
    for i, ax in enumerate(list(axes)[:n]):
        if i % cols == 0:
            ax.set_ylabel(ylabel)
        if i // cols == rows - 1 or i + cols >= n:
            ax.set_xlabel(xlabel)
            ax.tick_params(labelbottom=True)


def _curve(values: np.ndarray) -> np.ndarray:
    return np.quantile(values, _LEVELS, method="inverted_cdf")


def _finite_range(values: np.ndarray) -> tuple[float, float]:
    """Shared x-range of all strategies' curves, so each runs flat from edge to edge."""
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)


def _metric(metrics: np.ndarray, name: str) -> int:
    return METRICS.index(name)


@_literal_text
def exceedance_chart(metrics: np.ndarray, names: tuple[str, ...], colors: dict[str, str],
                     panels: tuple[tuple[str, str], ...], title: str) -> bytes:
    """P(metric > x) per strategy, one panel per (metric, x-axis label)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(12, 3.8), squeeze=False)
    for ax, (metric, xlabel) in zip(axes.flat, panels):
        k = _metric(metrics, metric)
        lo, hi = _finite_range(metrics[:, :, k])
        for s, name in enumerate(names):
            x = np.concatenate([[lo], _curve(metrics[:, s, k]), [hi]])
            y = np.concatenate([[1.0], 1.0 - _LEVELS, [0.0]])
            ax.step(x, y, where="post", color=colors[name], linewidth=1.8, label=_short(name, 28))
        ax.axhline(0.10, color="#888888", linewidth=0.8, linestyle=":")
        ax.text(ax.get_xlim()[1], 0.10, " 1 in 10", va="bottom", ha="right", fontsize=8,
                color="#555555")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("probability of exceeding")
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.xaxis.set_major_formatter(_COMPACT)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    _strategy_legend(fig, axes.flat[0], title)
    return _png(fig)


def _strategy_legend(fig, ax, title: str) -> None:
    """One legend row under the title, outside the plotting area: curves stay visible."""
    handles, labels = ax.get_legend_handles_labels()
    fig.suptitle(title, fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.93),
               ncol=min(len(labels), 6), fontsize=9, frameon=False)


@_literal_text
def completion_chart(metrics: np.ndarray, names: tuple[str, ...], colors: dict[str, str],
                     horizon: float) -> bytes:
    """S-curves: P(completion_day <= x) per strategy."""
    fig, ax = plt.subplots(figsize=(12, 3.8))
    k = _metric(metrics, "completion_day")
    lo, hi = _finite_range(metrics[:, :, k])
    for s, name in enumerate(names):
        x = np.concatenate([[lo], _curve(metrics[:, s, k]), [hi]])
        y = np.concatenate([[0.0], _LEVELS, [1.0]])
        ax.step(x, y, where="post", color=colors[name], linewidth=1.8, label=_short(name, 28))
    ax.axvline(horizon, label=f"horizon H = {horizon:,.0f} days", **_BASELINE_STYLE)
    for level in (0.5, 0.9):
        ax.axhline(level, color="#888888", linewidth=0.8, linestyle=":")
    ax.set_xlabel("completion day (last SU removed and last rack accepted)")
    ax.set_ylabel("probability done by then")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    _strategy_legend(fig, ax, "Completion S-curves (ECDF of completion_day)")
    return _png(fig)


@_literal_text
def power_chart(power: dict[str, list[HallPower]], colors: dict[str, str]) -> bytes:
    """P90 peak draw per hall and strategy against each hall's cap."""
    names = list(power)
    halls = [row.hall for row in power[names[0]]] if names else []
    fig, axes = plt.subplots(1, max(1, len(halls)), figsize=(12, 3.8), squeeze=False)
    for h, ax in enumerate(axes.flat[:len(halls)]):
        rows = [power[name][h] for name in names]
        y = np.arange(len(names))
        ax.barh(y, [r.peak_p90_kw for r in rows], color=[colors[n] for n in names], alpha=0.85)
        ax.scatter([r.peak_max_kw for r in rows], y, marker="|", s=200, color="black",
                   label="highest in any scenario", zorder=3)
        ax.axvline(rows[0].cap_kw, color="#B00020", linewidth=1.5,
                   label=f"cap {rows[0].cap_kw:,.0f} kW")
        ax.set_yticks(y, [_short(n, 24) for n in names], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(f"hall {_short(halls[h], 24)}: P90 peak draw (kW)")
        ax.xaxis.set_major_formatter(_THOUSANDS)
        ax.grid(alpha=0.3, axis="x")
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2,
                  frameon=False)
    fig.suptitle("Power check per hall: peak IT draw against the cap", fontsize=12)
    fig.tight_layout()
    return _png(fig)
