"""The report stage: every file a run writes from its results, and the nightly's comparisons.

    tables           metrics.parquet (streamed, a row group per chunk) and capacity_bands.parquet
    schedule_tables  milestones.parquet, the CSV copies and the schedule as text
    text             user strings made safe for HTML, Markdown and the terminal
    jobs             the job-mix table, in report.html and summary.md
    status           a migration in flight: the status, the history, the executing strategy
    markdown         summary.md
    findings/        sentences computed from the numbers
    figures/         the charts as PNG bytes, drawn in a second process while the run works
    html/            report.html (and the optimize report): sections, tables, figures' captions
    nightly/         night over night: the diff, significance, materiality, alerts, the trend

This module ties them together for a run: figure_pool starts the figures' worker before the
simulation, report_parts draws the figures and writes the findings, write_report writes
report.html and summary.md. Pure functions of a run's results: nothing here loads a scenario
or runs a simulation (the representative paths' replay is a function the run hands over,
RunResult.replay); mcrisk.app calls in.
"""
from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ..core.labels import axis_label
from ..core.outputs import write_atomic
from .figures.worker import FigurePool, worker_wanted

if TYPE_CHECKING:        # diff brings scipy.stats (~1.5 s): a plain run writes no diff
    from .nightly.diff import NightDiff

FIGURE_ORDER = ("fan", "island", "trough", "completion", "homeless", "power", "pareto")
# The exceedance figures: their panels (a metric and its x-axis, core.labels' axis_label)
# and their titles.
_EXCEEDANCE = {
    "trough": (tuple((m, axis_label(m)) for m in ("trough_depth", "trough_days",
                                                  "shortfall_gpu_days")),
               "Trough depth, duration and shortfall: probability of exceeding"),
    "homeless": ((("homeless_days", axis_label("homeless_days")),),
                 "Homeless time of the largest job ({largest_job:,.0f} H100-eq)"),
}

REPORT_FILE = "report.html"
SUMMARY_MD_FILE = "summary.md"


@contextlib.contextmanager
def figure_pool(report: bool = True) -> Iterator[FigurePool | None]:
    """The pool that draws a run's figures (None without a report): started before the
    simulation, so that its worker process (figures.worker, where one helps) imports
    matplotlib meanwhile; stopped on leaving, also on error."""
    if not report:
        yield None
        return
    with FigurePool(worker=worker_wanted()) as pool:
        yield pool


def submit_metric_figures(pool: FigurePool, plan, metrics, start=None) -> None:
    """Queue the figures drawn from the metrics alone (exceedance and completion curves), as
    soon as the simulation is done: the worker draws them while the summaries run. The
    metrics go as their curves (figures.data.MetricCurves), never whole."""
    from .figures import data        # not charts: that imports matplotlib

    names = plan.strategy_names
    colors = data.strategy_colors(names)
    table = data.curve_table(metrics, sorted({m for panels, _ in _EXCEEDANCE.values()
                                                 for m, _ in panels} | {"completion_day"}))
    for name in ("trough", "homeless"):
        panels, title = _EXCEEDANCE[name]
        pool.submit(name, "charts", "exceedance_of", {m: table[m] for m, _ in panels}, names,
                    colors, panels, title.format(largest_job=plan.largest_job))
    pool.submit("completion", "charts", "completion_of", table["completion_day"], names,
                colors, plan.horizon, data.completion_axis(metrics, names, plan.horizon),
                start)


def report_parts(run, pool: FigurePool | None = None
                 ) -> tuple[dict[str, bytes], list[str], dict[str, str]]:
    """(figures as PNG, findings paragraphs, strategy colours) of a RunResult with detail.

    The figures come as a figures.data.Figures (a dict of PNG bytes) that also carries what
    the captions state: the scenarios replayed and drawn as whole paths (figures.paths), and
    where the completion chart's day axis is cut. `pool` (figure_pool) draws them, with
    the metric figures perhaps already submitted; without one they are drawn here.
    """
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(FigurePool())
        return _report_parts(run, pool)


def _report_parts(run, pool: FigurePool):
    from .figures import data        # not charts: the pool's worker imports that
    from .findings.sentences import findings
    from .figures.paths import SEVERITY, representative_paths

    plan, metrics, detail = run.plan, run.result.metrics, run.detail
    names = plan.strategy_names
    colors = data.strategy_colors(names)
    start = run.scenario.start_date               # a date axis on top of the day axis, if set
    if "completion" not in pool:
        submit_metric_figures(pool, plan, metrics, start)
    replayed: dict = {}                        # a scenario picked twice is replayed once
    paths = {chart: representative_paths(plan, run.replay, metrics, severity,
                                         replayed=replayed)
             for chart, severity in SEVERITY.items()}
    lines, bands = data.plan_lines(plan), data.band_arrays(detail.bands)
    pool.submit("fan", "charts", "fan_chart", lines, bands, colors,
                data.path_lines(paths["fan"]), start)
    pool.submit("island", "charts", "largest_island_chart", lines, bands, colors,
                data.path_lines(paths["island"]), start)
    pool.submit("power", "charts", "power_chart", data.power_rows(detail.hall_power), colors)
    paragraphs = findings(run.scenario, run.summary, plan.largest_job, detail.hall_power,
                          metrics=metrics, names=names)
    report, cost_paragraphs = _cost_parts(run, pool, colors)
    drawn = pool.pngs()
    pictures = data.Figures({name: drawn[name] for name in FIGURE_ORDER if name in drawn},
                            paths=paths, costs=report,
                            completion=data.completion_axis(metrics, names, plan.horizon))
    return pictures, paragraphs + cost_paragraphs, colors


def _cost_parts(run, pool: FigurePool, colors: dict[str, str]) -> tuple:
    """With a [costs] section: (the cost report, the cost findings), the Pareto chart
    submitted to `pool`; (None, []) without costs."""
    from .html.costs import cost_report

    report = cost_report(run)
    if report is None:
        return None, []
    from .findings.costs import cost_findings
    from .figures.data import pareto_data

    pool.submit("pareto", "costs", "pareto_of", pareto_data(report, run.summary), colors)
    return report, cost_findings(run, report)


def write_report(run, diff: NightDiff | None = None, run_label: str | None = None,
                 notes: tuple[str, ...] = (), alerts=None, trend=None,
                 figures: FigurePool | None = None) -> list[Path]:
    """Write report.html and summary.md into run.out_dir; returns their paths.

    `notes`: nightly remarks shown in both, e.g. why no earlier night could be compared with;
    `alerts`: the nightly's --fail-if outcome (alerts.AlertOutcome), shown near the top of
    both; `trend`: (trend.Trend, its chart as PNG or None), the nightly's trend section;
    `figures`: the run's figure_pool, else the figures are drawn here.
    """
    from .html.page import render_report
    from .markdown import summary_markdown

    started = time.perf_counter()
    pictures, paragraphs, colors = report_parts(run, figures)
    md = summary_markdown(run.summary, paragraphs, diff, run_label, notes, alerts=alerts)
    page = render_report(run, pictures, paragraphs, colors, diff, run_label,
                         report_seconds=time.perf_counter() - started, notes=notes,
                         alerts=alerts, trend=trend)
    out = Path(run.out_dir)
    return [write_atomic(out / REPORT_FILE, page), write_atomic(out / SUMMARY_MD_FILE, md)]
