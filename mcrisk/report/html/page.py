"""report.html: one self-contained page (inline CSS, figures as inline SVG (the nightly trend chart a base64 PNG), no scripts, no
network). Every string that comes from the scenario file or a history is written through
text.html_text: HTML-escaped, with control and other invisible characters shown as escapes.

The page: its style, header, navigation and the order of its sections. Each section is built
in a module beside this one: tables (ranking, strategies, drivers, paired, power, mitigation),
figures (charts and captions), nightly (alerts, night over night, trend), definitions
(definitions, provenance), gantt (the schedule; only when the run collected milestones),
costs (cost against trough, the Pareto frontier; only with [costs]) and report.jobs (the job
mix's table; only with [[demand.jobs]]), on the pieces of parts.
"""
from __future__ import annotations

import datetime as _dt

from ...results.mitigation import risk_mode_text
from ...core.definitions import METRICS
from .costs import cost_section
from ..findings.sentences import fmt
from .definitions import definitions_html, provenance_table
from .figures import (completion_figure, fan_figure, homeless_figure, island_figure, power_figure,
                      trough_figure)
from .nightly import alerts_html, diff_html, trend_html
from .parts import horizon_date_text, notes_html
from ..jobs import jobs_html
from ..status import executing_html, status_html
from .contingent import contingent_section
from .tables import (drivers_table, mitigation_section, paired_table, power_table, ranking_table,
                     strategies_table)
from ..nightly.metric_changes import NightDiff
from ..text import html_text

__all__ = [   # the page, and the sections that callers and tests take from here
    "alerts_html", "definitions_html", "diff_html", "drivers_table", "paired_table",
    "power_table", "ranking_table", "render_report", "trend_html"]

PAGE_CSS = """
:root { --ink: #1b1f24; --muted: #5b6470; --line: #d8dde3; --band: #f5f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: var(--ink); background: #fff; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-top: 8px; border-top: 2px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 8px; }
p.sub { color: var(--muted); margin: 0 0 12px; }
nav { font-size: 14px; margin: 10px 0 0; }
nav a { margin-right: 14px; color: #0b5cad; text-decoration: none; }
.findings { background: #eef5fb; border-left: 4px solid #0072B2; padding: 10px 18px; }
.findings p { margin: 8px 0; }
.warn { background: #fdecea; border-left: 4px solid #B00020; padding: 8px 14px; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 14px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 9px; vertical-align: top; }
th { background: var(--band); text-align: left; font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
/* No table hides a column behind a scroll bar (issue 26): headers wrap; a number never does,
   and a wide table's cells (.wrap) wrap only between their parts (.u: '[1,180, 2,527]'). */
td.n { white-space: nowrap; }
table.wrap td.n { white-space: normal; }
.u { white-space: nowrap; }
.ci { color: var(--muted); font-size: 12px; }
tr:nth-child(even) td { background: #fbfcfd; }
td.name { white-space: nowrap; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
          margin-right: 6px; vertical-align: -1px; }
figure { margin: 12px 0 20px; }
figure img { width: 100%; height: auto; border: 1px solid var(--line); }
figure.svg svg { width: 100%; height: auto; border: 1px solid var(--line); }
svg.gantt { max-width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;
       background: var(--band); padding: 1px 4px; border-radius: 3px; word-break: break-all; }
.yes { color: #B00020; font-weight: 600; }
.scroll { overflow-x: auto; }
table.ranking { width: 100%; font-size: 13px; }
table.ranking th, table.ranking td { padding: 4px 6px; }
table.ranking th { white-space: normal; vertical-align: bottom; }
table.ranking th.g { text-align: center; border-bottom: 1px solid var(--line); }
table.ranking td.n .ci { white-space: normal; font-size: 11px; }
.warn.horizon { margin: 6px 0; }
.warn.horizon p { margin: 2px 0; }
@media (max-width: 1000px) {
  main { padding: 16px 12px 48px; }
  table.ranking { font-size: 11px; }
  table.ranking th, table.ranking td { padding: 3px 3px; }
  table.ranking td.name { white-space: normal; overflow-wrap: anywhere; }
  table.ranking .swatch { width: 9px; height: 9px; margin-right: 3px; }
  table.ranking td.n .ci { font-size: 10px; }
}
@media print {
  main { max-width: none; padding: 0; }
  .scroll { overflow: visible; }
  table { font-size: 8.5pt; }
  th, td { padding: 3px 4px; }
  .ci { font-size: 7.5pt; }
  table.ranking { font-size: 8.5pt; }
  table.ranking th, table.ranking td { padding: 2px 3px; }
  table.ranking td.name { white-space: normal; overflow-wrap: anywhere; }
  table.ranking td.n .ci { font-size: 7.5pt; }
  table.ranking tr, .warn { break-inside: avoid; }
  .swatch, .warn, th { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"""


def _risk_mode_html(s: dict) -> str:
    """A visible line near the top when the run's risk register is not the file's."""
    risks = s.get("risks", {})
    if risks.get("mode", "file") == "file" and not risks.get("disabled_by_cli"):
        return ""
    return ('<div class="findings"><p><b>Risk register set on the command line</b>: '
            f"{html_text(risk_mode_text(risks))}. A plain run (<code>--risks file</code>) "
            "takes the register as the scenario file writes it.</p></div>")


def _status_text(s: dict) -> str:
    """'status as of day 150 (2027-06-01), sha256 0123456789ab · ' in the header of a run
    with a status; empty otherwise."""
    st = s.get("status")
    if not st:
        return ""
    date = f" ({html_text(st['as_of_date'])})" if st.get("as_of_date") else ""
    return (f"status as of day {fmt(st['as_of'])}{date}, sha256 "
            f"<code>{html_text(st['sha256'][:12])}</code> · ")


def _schedule_section(run, colors: dict[str, str]) -> list[str]:
    """Milestones as a schedule (mcrisk.report.html.gantt), when the run collected them."""
    from .gantt import schedule_html

    section = schedule_html(run, colors)
    return ['<h2 id="schedule">Schedule: milestones</h2>', section] if section else []


def render_report(run, figures: dict[str, bytes], paragraphs: list[str], colors: dict[str, str],
                  diff: NightDiff | None = None, run_label: str | None = None,
                  report_seconds: float | None = None, notes: tuple[str, ...] = (),
                  alerts=None, trend=None) -> str:
    """The whole page as a string. `run` is a RunResult with detail; figures as SVG elements.

    `notes`: nightly remarks without a comparison (why no earlier night could be read);
    `alerts`: the nightly's alerts.AlertOutcome (a box at the top, with the changed inputs);
    `trend`: the nightly's (trend.Trend, chart PNG or None). Both None outside the nightly."""
    s, scenario, plan = run.summary, run.scenario, run.plan
    title = f"mcrisk report: {scenario.name}"
    warn = [p for p in paragraphs if p.startswith("WARNING")]
    body = [f"<h1>{html_text(title)}</h1>",
            f'<p class="sub">{html_text(scenario.description)}</p>' if scenario.description else "",
            f'<p class="sub">{s["samples"]:,} scenarios × {len(s["strategies"])} strategies · '
            f'seed {html_text(str(s["seed"]))} · backend {html_text(s["backend"])} · '
            f'baseline {fmt(plan.baseline)} H100-eq · horizon {fmt(plan.horizon)} days'
            f'{horizon_date_text(s)} · '
            + _status_text(s)
            + f'{html_text(s.get("created_utc", ""))}'
            + (f" · nightly run <code>{html_text(run_label)}</code>" if run_label else "") + "</p>",
            _risk_mode_html(s),
            "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in (
                *((("status", "Status"),) if "status" in s else ()),
                ("findings", "Findings"), ("ranking", "Ranking"), ("drivers", "Drivers"),
                *((("costs", "Cost"),) if getattr(figures, "costs", None) else ()),
                *((("jobs", "Job mix"),) if "jobs" in s else ()),
                *((("mitigation", "Mitigation"),) if "mitigation" in s else ()),
                *((("diff", "Night over night"),) if diff or notes else ()),
                *((("trend", "Trend"),) if trend is not None else ()),
                ("capacity", "Capacity"), ("trough", "Trough"), ("completion", "Completion"),
                ("homeless", "Largest job"), ("power", "Power"),
                *((("schedule", "Schedule"),) if "milestones" in s else ()),
                ("strategies", "Strategies"),
                ("definitions", "Definitions"), ("provenance", "Provenance"))) + "</nav>",
            *([alerts_html(alerts, diff, () if diff is not None else notes)]
              if alerts is not None else []),
            *executing_html(s, colors),
            *status_html(s, colors),
            '<h2 id="findings">Findings</h2><div class="findings">'
            + "".join(f'<p class="{"warn" if p in warn else ""}">{html_text(p)}</p>'
                      for p in paragraphs) + "</div>",
            '<h2 id="ranking">Ranking</h2>',
            ranking_table(s, colors),
            '<h2 id="drivers">What drives the P90 trough</h2>'
            "<p>For each strategy, the inputs ranked by the size of their rank correlation "
            f"with one metric over {s['drivers']['scenarios']:,} scenarios (the sign says the "
            "direction: negative, a larger input goes with a lower metric), and how far each "
            "sits from its mean, in its own unit, in the scenarios ranked 85–95% on the metric. "
            "The metric is the strategy's trough days, or its shortfall where its trough days "
            "do not vary: not necessarily the criterion that decided its rank, shown beside "
            "it. Rank correlations say what goes together, not why.</p>",
            drivers_table(s, colors),
            '<h3>Against the leader, world by world</h3>', paired_table(s, colors)]
    body += cost_section(run, figures, colors)
    body += jobs_html(s, colors)
    body += mitigation_section(s, colors)
    body += contingent_section(s, colors)
    if diff is not None:
        body += ['<h2 id="diff">Night over night</h2>', diff_html(diff)]
    elif notes:
        body += ['<h2 id="diff">Night over night</h2>', notes_html(notes)]
    if trend is not None:
        body += ['<h2 id="trend">Trend across nights</h2>', trend_html(*trend)]
    body += ['<h2 id="capacity">Capacity over time</h2>',
             fan_figure(figures, s, plan, colors),
             '<h2 id="trough">Trough: depth, duration and shortfall</h2>',
             trough_figure(figures),
             '<h2 id="completion">Completion</h2>',
             completion_figure(figures),
             '<h2 id="homeless">Homeless time of the largest job</h2>',
             homeless_figure(figures, plan),
             island_figure(figures, s, plan, colors),
             '<h2 id="power">Power check per hall</h2>',
             "<p>Peak IT draw of each hall: the highest draw at any time, after the horizon "
             "too (old units draw until removed, new racks from install start), its P50, P90 "
             "and highest over the scenarios (one cell where they are equal); headroom: the cap "
             "minus the highest peak of any scenario; and the probability that the peak "
             "exceeds the cap.</p>",
             power_table(run.detail.hall_power, colors),
             power_figure(figures),
             *_schedule_section(run, colors),
             '<h2 id="strategies">Strategies</h2>',
             strategies_table(scenario.strategies, colors),
             definitions_html(run),
             '<h2 id="provenance">Provenance</h2>',
             provenance_table(run, report_seconds, run_label),
             f'<p class="sub">Generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC} by '
             f"mcrisk {html_text(s['mcrisk_version'])}. Metric definitions: "
             f"{', '.join(METRICS)}.</p>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(title)}</title><style>{PAGE_CSS}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")
