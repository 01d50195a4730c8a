"""The report stage: every file a run writes from its results, and the nightly's comparisons.

    tables           metrics.parquet (streamed, a row group per chunk) and capacity_bands.parquet
    schedule_tables  milestones.parquet, the CSV copies and the schedule as text
    text             user strings made safe for HTML, Markdown and the terminal
    jobs             the job-mix table, in report.html and summary.md
    status           a migration in flight: the status, the history, the executing strategy
    markdown         summary.md
    findings/        sentences computed from the numbers
    figures/         the charts as inline SVG, built as text in milliseconds
    html/            report.html (and the optimize report): sections, tables, figures' captions
    nightly/         night over night: the diff, significance, materiality, alerts, the trend

This module ties them together for a run: report_parts draws the figures and writes the
findings, write_report writes report.html and summary.md. Pure functions of a run's results: nothing here loads a scenario
or runs a simulation (the representative paths' replay is a function the run hands over,
RunResult.replay); mcrisk.app calls in.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.labels import axis_label
from ..core.outputs import write_atomic

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


def metric_figures(plan, metrics, start=None, axis=None) -> dict[str, str]:
    """The figures drawn from the metrics alone (exceedance and completion curves), as SVG.
    The charts read the metrics as their curves (figures.data.MetricCurves); `axis`: the
    completion chart's figures.data.completion_axis, when the caller has it already."""
    from .figures import charts, data

    names = plan.strategy_names
    colors = data.strategy_colors(names)
    table = data.curve_table(metrics, sorted({m for panels, _ in _EXCEEDANCE.values()
                                                 for m, _ in panels} | {"completion_day"}))
    drawn = {}
    for name in ("trough", "homeless"):
        panels, title = _EXCEEDANCE[name]
        drawn[name] = charts.exceedance_of({m: table[m] for m, _ in panels}, names, colors,
                                           panels, title.format(largest_job=plan.largest_job))
    if axis is None:
        axis = data.completion_axis(metrics, names, plan.horizon)
    drawn["completion"] = charts.completion_of(table["completion_day"], names, colors,
                                               plan.horizon, axis, start)
    return drawn


def report_parts(run) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """(figures as SVG, findings paragraphs, strategy colours) of a RunResult with detail.

    The figures come as a figures.data.Figures (a dict of SVG elements) that also carries
    what the captions state: the scenarios replayed and drawn as whole paths
    (figures.paths), and where the completion chart's day axis is cut.
    """
    from .figures import charts, data
    from .findings.sentences import findings
    from .figures.paths import SEVERITY, representative_paths

    plan, metrics, detail = run.plan, run.result.metrics, run.detail
    names = plan.strategy_names
    colors = data.strategy_colors(names)
    start = run.scenario.start_date               # a date axis on top of the day axis, if set
    axis = data.completion_axis(metrics, names, plan.horizon)     # once: figure and caption
    drawn = metric_figures(plan, metrics, start, axis)
    replayed: dict = {}                        # a scenario picked twice is replayed once
    paths = {chart: representative_paths(plan, run.replay, metrics, severity,
                                         replayed=replayed)
             for chart, severity in SEVERITY.items()}
    drawn["fan"] = charts.fan_chart(plan, detail.bands, colors, paths["fan"], start)
    drawn["island"] = charts.largest_island_chart(plan, detail.bands, colors, paths["island"],
                                                  start)
    drawn["power"] = charts.power_chart(detail.hall_power, colors)
    paragraphs = findings(run.scenario, run.summary, plan.largest_job, detail.hall_power,
                          metrics=metrics, names=names)
    report, cost_paragraphs = _cost_parts(run, drawn, colors)
    pictures = data.Figures({name: drawn[name] for name in FIGURE_ORDER if name in drawn},
                            paths=paths, costs=report,
                            completion=axis)
    return pictures, paragraphs + cost_paragraphs, colors


def _cost_parts(run, drawn: dict[str, str], colors: dict[str, str]) -> tuple:
    """With a [costs] section: (the cost report, the cost findings), the Pareto chart
    drawn into `drawn`; (None, []) without costs."""
    from .html.costs import cost_report

    report = cost_report(run)
    if report is None:
        return None, []
    from .findings.costs import cost_findings
    from .figures.costs import pareto_of
    from .figures.data import pareto_data

    drawn["pareto"] = pareto_of(pareto_data(report, run.summary), colors)
    return report, cost_findings(run, report)


def write_report(run, diff: NightDiff | None = None, run_label: str | None = None,
                 notes: tuple[str, ...] = (), alerts=None, trend=None) -> list[Path]:
    """Write report.html and summary.md into run.out_dir; returns their paths.

    `notes`: nightly remarks shown in both, e.g. why no earlier night could be compared with;
    `alerts`: the nightly's --fail-if outcome (alerts.AlertOutcome), shown near the top of
    both; `trend`: (trend.Trend, its chart as PNG or None), the nightly's trend section.
    """
    from .html.page import render_report
    from .markdown import summary_markdown

    started = time.perf_counter()
    pictures, paragraphs, colors = report_parts(run)
    md = summary_markdown(run.summary, paragraphs, diff, run_label, notes, alerts=alerts)
    page = render_report(run, pictures, paragraphs, colors, diff, run_label,
                         report_seconds=time.perf_counter() - started, notes=notes,
                         alerts=alerts, trend=trend)
    out = Path(run.out_dir)
    return [write_atomic(out / REPORT_FILE, page), write_atomic(out / SUMMARY_MD_FILE, md)]
