"""The report stage: Parquet tables, capacity bands, figures, report.html, summary.md, and the
night-over-night diffs, alerts and trend that the nightly (mcrisk.nightly) renders.

Pure functions of a run's results: nothing here loads a scenario or runs a simulation (the
representative paths' replay is a function the run hands over, RunResult.replay); run.py and
nightly.py, above, call in.

    collect   chunk hooks run during simulate(): metrics.parquet, bands, power per hall
    bands     exact streaming histograms of capacity per (strategy, day)
    band_chunks  the bands' and hall power's chunk reduction in compiled loops
    tables    the Parquet files
    figures   matplotlib figures as PNG bytes
    findings  sentences generated from the numbers
    costs     the cost section: cost beside trough, the Pareto frontier (cost_figures: its
              chart; cost_findings: the trade in one sentence per pair)
    html      report.html (self-contained)
    markdown  summary.md
    diff      night-over-night comparison (diff.md)
    alerts    --fail-if conditions
    trend     each strategy's P90s across the nights of a history
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..outputs import write_atomic

if TYPE_CHECKING:        # diff brings scipy.stats (~1.5 s): a plain run writes no diff
    from .diff import NightDiff

REPORT_FILE = "report.html"
SUMMARY_MD_FILE = "summary.md"


def report_parts(run) -> tuple[dict[str, bytes], list[str], dict[str, str]]:
    """(figures as PNG, findings paragraphs, strategy colours) of a RunResult with detail.

    The figures come as a figures.Figures (a dict of PNG bytes) that also carries what the
    captions state: the scenarios replayed and drawn as whole paths (mcrisk.report.paths),
    and where the completion chart's day axis is cut.
    """
    from . import figures
    from .findings import findings
    from .paths import SEVERITY, representative_paths

    plan, metrics, detail = run.plan, run.result.metrics, run.detail
    names = plan.strategy_names
    colors = figures.strategy_colors(names)
    replayed: dict = {}                        # a scenario picked twice is replayed once
    paths = {chart: representative_paths(plan, run.replay, metrics, severity,
                                         replayed=replayed)
             for chart, severity in SEVERITY.items()}
    completion = figures.completion_axis(metrics, names, plan.horizon)
    start = run.scenario.start_date               # a date axis on top of the day axis, if set
    pictures = figures.Figures({
        "fan": figures.fan_chart(plan, detail.bands, colors, paths["fan"], start),
        "island": figures.largest_island_chart(plan, detail.bands, colors, paths["island"],
                                               start),
        "trough": figures.exceedance_chart(
            metrics, names, colors,
            (("trough_depth", "trough depth (H100-eq below baseline)"),
             ("trough_days", "days below baseline"),
             ("shortfall_gpu_days", "shortfall against demand (H100-eq × days)")),
            "Trough depth, duration and shortfall: probability of exceeding"),
        "completion": figures.completion_chart(metrics, names, colors, plan.horizon,
                                               completion, start),
        "homeless": figures.exceedance_chart(
            metrics, names, colors, (("homeless_days", "days with no island big enough"),),
            f"Homeless time of the largest job ({plan.largest_job:,.0f} H100-eq)"),
        "power": figures.power_chart(detail.hall_power, colors),
    }, paths=paths, completion=completion)
    paragraphs = findings(run.scenario, run.summary, plan.largest_job, detail.hall_power,
                          metrics=metrics, names=names)
    return pictures, paragraphs + _cost_parts(run, pictures, colors), colors


def _cost_parts(run, pictures, colors: dict[str, str]) -> list[str]:
    """With a [costs] section: the cost report onto `pictures` (pictures.costs), the Pareto
    chart into it, and the cost findings returned; nothing without costs."""
    from .costs import cost_report

    report = cost_report(run)
    if report is None:
        return []
    from .cost_figures import pareto_chart
    from .cost_findings import cost_findings

    pictures.costs = report
    pictures["pareto"] = pareto_chart(report, run.summary, colors)
    return cost_findings(run, report)


def write_report(run, diff: NightDiff | None = None, run_label: str | None = None,
                 notes: tuple[str, ...] = (), alerts=None, trend=None) -> list[Path]:
    """Write report.html and summary.md into run.out_dir; returns their paths.

    `notes`: nightly remarks shown in both, e.g. why no earlier night could be compared with;
    `alerts`: the nightly's --fail-if outcome (alerts.AlertOutcome), shown near the top of
    both; `trend`: (trend.Trend, its chart as PNG or None), the nightly's trend section.
    """
    from .html import render_report
    from .markdown import summary_markdown

    started = time.perf_counter()
    pictures, paragraphs, colors = report_parts(run)
    md = summary_markdown(run.summary, paragraphs, diff, run_label, notes, alerts=alerts)
    page = render_report(run, pictures, paragraphs, colors, diff, run_label,
                         report_seconds=time.perf_counter() - started, notes=notes,
                         alerts=alerts, trend=trend)
    out = Path(run.out_dir)
    return [write_atomic(out / REPORT_FILE, page), write_atomic(out / SUMMARY_MD_FILE, md)]
