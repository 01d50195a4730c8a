"""report.html: one self-contained page (inline CSS, figures as base64 PNG, no scripts, no
network). Every string that comes from the scenario file or a history is written through
text.html_text: HTML-escaped, with control and other invisible characters shown as escapes."""
from __future__ import annotations

import base64
import datetime as _dt

from ..compile import METRICS
from .diff import ALPHA, NightDiff, render_value
from .findings import fmt
from .text import html_text

_CSS = """
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
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.ci { color: var(--muted); font-size: 12px; }
tr:nth-child(even) td { background: #fbfcfd; }
td.name { white-space: nowrap; }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 2px;
          margin-right: 6px; vertical-align: -1px; }
figure { margin: 12px 0 20px; }
figure img { width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;
       background: var(--band); padding: 1px 4px; border-radius: 3px; word-break: break-all; }
.yes { color: #B00020; font-weight: 600; }
.scroll { overflow-x: auto; }
"""

_LABELS = {"trough_depth": "trough depth (H100-eq)", "trough_days": "trough days",
           "shortfall_gpu_days": "shortfall (H100-eq × days)", "homeless_days": "homeless days",
           "completion_day": "completion day", "power_violation": "P(power over cap)"}


def _img(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html_text(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html_text(caption)}</figcaption></figure>")


def _swatch(name: str, colors: dict[str, str]) -> str:
    return f'<span class="swatch" style="background:{colors[name]}"></span>{html_text(name)}'


def _ci(m: dict, key: str = "p90_ci") -> str:
    """[low, high] of the interval m[key], or [n/a] where summary.json has none (null: too
    few scenarios for it to exist)."""
    if m.get(key) is None:
        return "[n/a]"
    low, high = m[key]
    return f"[{fmt(low)}, {fmt(high)}]"


def ranking_table(summary: dict, colors: dict[str, str]) -> str:
    head = ("<tr><th class='n'>rank</th><th>strategy</th>"
            + "".join(f'<th class="n" colspan="2">{html_text(_LABELS[m])}</th>'
                      for m in ("trough_depth", "trough_days", "shortfall_gpu_days"))
            + f'<th class="n">{_LABELS["homeless_days"]}</th>'
            f'<th class="n" colspan="2">{_LABELS["completion_day"]}</th>'
            f'<th class="n">{_LABELS["power_violation"]}</th></tr>'
            "<tr><th></th><th></th>"
            + '<th class="n">P50</th><th class="n">P90 [95% CI]</th>' * 3
            + '<th class="n">P90 [95% CI]</th><th class="n">P50</th><th class="n">P90</th>'
            "<th></th></tr>")

    def p90(m: dict) -> str:
        return f'<td class="n"><b>{fmt(m["p90"])}</b><br><span class="ci">{_ci(m)}</span></td>'

    rows = []
    for position, name in enumerate(summary["ranking"], start=1):
        m = summary["strategies"][name]
        cells = [f'<td class="n">{position}</td><td class="name">{_swatch(name, colors)}</td>']
        for metric in ("trough_depth", "trough_days", "shortfall_gpu_days"):
            cells.append(f'<td class="n">{fmt(m[metric]["p50"])}</td>{p90(m[metric])}')
        cells.append(p90(m["homeless_days"]))
        cells.append(f'<td class="n">{fmt(m["completion_day"]["p50"])}</td>'
                     f'<td class="n">{fmt(m["completion_day"]["p90"])}</td>')
        p = m["power_violation"]["probability"]
        cells.append(f'<td class="n{" yes" if p > 0 else ""}">{p:.1%}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table>{head}{"".join(rows)}</table></div>'


def power_table(hall_power: dict, colors: dict[str, str]) -> str:
    rows = []
    for name, halls in hall_power.items():
        for i, h in enumerate(halls):
            first = f'<td class="name" rowspan="{len(halls)}">{_swatch(name, colors)}</td>' if i == 0 else ""
            flag = " yes" if h.probability_over > 0 else ""
            rows.append(f"<tr>{first}<td>{html_text(h.hall)}</td><td class='n'>{fmt(h.cap_kw)}</td>"
                        f"<td class='n'>{fmt(h.peak_p50_kw)}</td><td class='n'>{fmt(h.peak_p90_kw)}</td>"
                        f"<td class='n'>{fmt(h.peak_max_kw)}</td>"
                        f"<td class='n{flag}'>{h.probability_over:.2%}</td></tr>")
    return ("<table><tr><th>strategy</th><th>hall</th><th class='n'>cap (kW)</th>"
            "<th class='n'>peak draw P50 (kW)</th><th class='n'>P90 (kW)</th>"
            "<th class='n'>highest (kW)</th><th class='n'>P(over cap)</th></tr>"
            + "".join(rows) + "</table>")


def drivers_table(summary: dict, colors: dict[str, str], top: int = 3) -> str:
    """Per strategy, the inputs that drive its P90 trough (trough days, else shortfall)."""
    rows = []
    for name in summary["ranking"]:
        per_metric = summary["drivers"]["strategies"][name]
        metric = next((m for m in ("trough_days", "shortfall_gpu_days") if per_metric[m]), None)
        drivers = per_metric[metric][:top] if metric else []
        cells = "".join(
            f"<td>{html_text(d['label'])}<br><span class='ci'>rank corr {d['spearman']:+.2f}; "
            f"{d['shift']:+,.1f} vs mean near P90</span></td>" for d in drivers)
        cells += "<td></td>" * (top - len(drivers))
        label = html_text(_LABELS[metric]) if metric else "no metric varies"
        rows.append(f"<tr><td class='name'>{_swatch(name, colors)}</td><td>{label}</td>{cells}</tr>")
    head = "".join(f"<th>driver {k + 1}</th>" for k in range(top))
    return (f"<div class='scroll'><table><tr><th>strategy</th><th>metric</th>{head}</tr>"
            + "".join(rows) + "</table></div>")


def paired_table(summary: dict, colors: dict[str, str]) -> str:
    """Each strategy against the leader, scenario by scenario (common random numbers)."""
    paired = summary["paired"]
    rows = []
    for name, per_metric in paired["strategies"].items():
        for metric in ("trough_depth", "trough_days", "shortfall_gpu_days"):
            d = per_metric[metric]
            rows.append(
                f"<tr><td class='name'>{_swatch(name, colors)}</td><td>{html_text(_LABELS[metric])}</td>"
                f"<td class='n'>{fmt(d['mean'])} <span class='ci'>{_ci(d, 'mean_ci')}</span></td>"
                f"<td class='n'>{fmt(d['p90'])} <span class='ci'>{_ci(d)}</span></td>"
                f"<td class='n'>{d['p_a_worse']:.1%}</td></tr>")
    return (f"<p>Each strategy minus the leader, <b>{html_text(paired['leader'])}</b>, in the same "
            "sampled worlds (positive: worse). Pairing removes the world-to-world spread that two "
            "independent runs would carry.</p><div class='scroll'><table><tr><th>strategy</th>"
            "<th>metric</th><th class='n'>mean [95% CI]</th><th class='n'>P90 [95% CI]</th>"
            "<th class='n'>P(worse)</th></tr>" + "".join(rows) + "</table></div>")


def diff_html(diff: NightDiff) -> str:
    """The night-over-night section, rendered from the same data as diff.md."""
    parts = [f"<p>Compared with <code>{html_text(diff.previous)}</code> ({html_text(diff.pairing_note)}). "
             f"Beyond noise: p &lt; {ALPHA} (paired) or non-overlapping 95% CIs (unpaired).</p>",
             _notes_html(diff.skipped), "<h3>Scenario inputs that changed</h3>"]
    if diff.same_file:
        parts.append("<p>None: the scenario file is byte-for-byte the same.</p>")
    elif not diff.input_changes:
        parts.append("<p>No keys changed (comments or layout only).</p>")
    else:
        items = []
        for c in diff.input_changes:
            if c.kind == "changed":
                items.append(f"<li>changed <code>{html_text(c.key)}</code>: "
                             f"{html_text(render_value(c.old))} → {html_text(render_value(c.new))}</li>")
            elif c.kind == "added":
                items.append(f"<li>added <code>{html_text(c.key)}</code> = {html_text(render_value(c.new))}</li>")
            else:
                items.append(f"<li>removed <code>{html_text(c.key)}</code> (was "
                             f"{html_text(render_value(c.old))})</li>")
        parts.append("<ul>" + "".join(items) + "</ul>")
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            parts.append(f"<p>Strategies {label}: {html_text(', '.join(names))}</p>")
    parts.append("<h3>Changes beyond Monte Carlo noise</h3>")
    if not diff.significant:
        parts.append("<p>None.</p>")
    else:
        parts.append("<ul>" + "".join(
            f"<li><b>{html_text(c.strategy)}</b> {html_text(c.metric)} {c.stat.upper()}: "
            f"{fmt(c.old)} → {fmt(c.new)} ({'+' if c.delta > 0 else ''}{fmt(c.delta)}; "
            f"{html_text(c.method)})</li>" for c in diff.significant) + "</ul>")
    rows = "".join(
        f"<tr><td>{html_text(c.strategy)}</td><td>{html_text(c.metric)}</td><td>{c.stat}</td>"
        f"<td class='n'>{fmt(c.old)}</td><td class='n'>{fmt(c.new)}</td>"
        f"<td class='n'>{'+' if c.delta > 0 else ''}{fmt(c.delta)}</td>"
        f"<td class='{'yes' if c.significant else ''}'>{'yes' if c.significant else 'no'}</td>"
        f"<td class='ci'>{html_text(c.method)}</td></tr>" for c in diff.changes)
    parts.append("<details><summary>All compared statistics</summary><div class='scroll'><table>"
                 "<tr><th>strategy</th><th>metric</th><th>stat</th><th class='n'>last night</th>"
                 "<th class='n'>tonight</th><th class='n'>change</th><th>beyond noise</th>"
                 f"<th>how judged</th></tr>{rows}</table></div></details>")
    return "".join(parts)


def _notes_html(notes) -> str:
    """Nightly remarks (an earlier night that could not be compared with, and why)."""
    if not notes:
        return ""
    return ('<div class="warn"><ul>' + "".join(f"<li>{html_text(n)}</li>" for n in notes)
            + "</ul></div>")


def _provenance(run, report_seconds: float | None, run_label: str | None) -> str:
    s = run.summary
    rows = [("scenario", f"<code>{html_text(s['scenario'])}</code>"),
            ("scenario sha256", f"<code>{html_text(s['scenario_sha256'])}</code>"),
            ("scenario name", html_text(s.get("scenario_name", ""))),
            ("samples", f"{s['samples']:,}"), ("seed", html_text(str(s["seed"]))),
            ("backend", f"{html_text(s['backend'])} ({html_text(s.get('backend_reason', ''))})"),
            ("mcrisk version", html_text(s["mcrisk_version"])), ("random numbers", html_text(s["rng"])),
            ("chunk size", f"{s.get('chunk_size', 0):,}"),
            ("simulation wall time", f"{s['wall_seconds']:.2f} s (incl. streaming the tables)"),
            ("run created (UTC)", html_text(s.get("created_utc", "")))]
    if report_seconds is not None:
        rows.append(("report wall time", f"{report_seconds:.2f} s"))
    if run_label:
        rows.insert(0, ("nightly run", f"<code>{html_text(run_label)}</code>"))
    rows.append(("percentiles", "P50/P90/P99 over scenarios as numpy.quantile's default (linear); "
                 "P90 CI: distribution-free, binomial order statistics; capacity bands: "
                 "numpy 'inverted_cdf' at integer days (events at time ≤ d count)"))
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def render_report(run, figures: dict[str, bytes], paragraphs: list[str], colors: dict[str, str],
                  diff: NightDiff | None = None, run_label: str | None = None,
                  report_seconds: float | None = None, notes: tuple[str, ...] = ()) -> str:
    """The whole page as a string. `run` is a RunResult with detail; figures as PNG bytes.

    `notes`: nightly remarks without a comparison (why no earlier night could be read)."""
    s, scenario, plan = run.summary, run.scenario, run.plan
    title = f"mcrisk report: {scenario.name}"
    warn = [p for p in paragraphs if p.startswith("WARNING")]
    body = [f"<h1>{html_text(title)}</h1>",
            f'<p class="sub">{html_text(scenario.description)}</p>' if scenario.description else "",
            f'<p class="sub">{s["samples"]:,} scenarios × {len(s["strategies"])} strategies · '
            f'seed {html_text(str(s["seed"]))} · backend {html_text(s["backend"])} · '
            f'baseline {fmt(plan.baseline)} H100-eq · horizon {fmt(plan.horizon)} days · '
            f'{html_text(s.get("created_utc", ""))}'
            + (f" · nightly run <code>{html_text(run_label)}</code>" if run_label else "") + "</p>",
            "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in (
                ("findings", "Findings"), ("ranking", "Ranking"), ("drivers", "Drivers"),
                *((("diff", "Night over night"),) if diff or notes else ()),
                ("capacity", "Capacity"), ("trough", "Trough"), ("completion", "Completion"),
                ("homeless", "Largest job"), ("power", "Power"), ("strategies", "Strategies"),
                ("provenance", "Provenance"))) + "</nav>",
            '<h2 id="findings">Findings</h2><div class="findings">'
            + "".join(f'<p class="{"warn" if p in warn else ""}">{html_text(p)}</p>'
                      for p in paragraphs) + "</div>",
            '<h2 id="ranking">Ranking</h2>'
            "<p>Best first: by P90 trough depth, then P90 trough days, then P90 shortfall. Bold: "
            "the P90s; grey: their distribution-free 95% confidence intervals.</p>",
            ranking_table(s, colors),
            '<h2 id="drivers">What drives the P90 trough</h2>'
            "<p>Inputs ranked by their rank correlation with the metric over "
            f"{s['drivers']['scenarios']:,} scenarios, and how far each sits from its mean (its "
            "own unit, days) in the scenarios ranked 85–95% on the metric.</p>",
            drivers_table(s, colors),
            '<h3>Against the leader, world by world</h3>', paired_table(s, colors)]
    if diff is not None:
        body += ['<h2 id="diff">Night over night</h2>', diff_html(diff)]
    elif notes:
        body += ['<h2 id="diff">Night over night</h2>', _notes_html(notes)]
    body += ['<h2 id="capacity">Capacity over time</h2>',
             _img(figures["fan"], "fan charts of capacity over time per strategy",
                  "Shaded: P10–P90 of capacity in service at each day over all scenarios; line: "
                  "P50. Dashed: today's capacity (baseline); dotted: demand."),
             '<h2 id="trough">Trough: depth, duration and shortfall</h2>',
             _img(figures["trough"], "exceedance curves of trough depth, days and shortfall",
                  "Probability that the metric exceeds the value on the x-axis; read the P90 where "
                  "a curve crosses the 1-in-10 line."),
             '<h2 id="completion">Completion</h2>',
             _img(figures["completion"], "completion S-curves",
                  "Share of scenarios in which the migration is complete by each day."),
             '<h2 id="homeless">Homeless time of the largest job</h2>',
             _img(figures["homeless"], "exceedance curve of homeless days",
                  f"Days on which no island holds the largest job ({fmt(plan.largest_job)} H100-eq)."),
             _img(figures["island"], "largest island capacity over time",
                  "The largest island's capacity: P10–P90 band and P50; red dashed: the largest job."),
             '<h2 id="power">Power check per hall</h2>',
             "<p>Peak IT draw of each hall at any time (old units draw until removed, new racks from "
             "install start), and the probability that it exceeds the hall's cap.</p>",
             power_table(run.detail.hall_power, colors),
             _img(figures["power"], "peak power draw per hall", "Bars: P90 peak draw; tick: the "
                  "highest in any scenario; red line: the hall's cap."),
             '<h2 id="strategies">Strategies</h2>',
             "<table><tr><th>strategy</th><th>plan</th></tr>" + "".join(
                 f"<tr><td class='name'>{_swatch(st.name, colors)}</td><td>{html_text(st.description)}</td></tr>"
                 for st in scenario.strategies) + "</table>",
             '<h2 id="provenance">Provenance</h2>', _provenance(run, report_seconds, run_label),
             f'<p class="sub">Generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC} by '
             f"mcrisk {html_text(s['mcrisk_version'])}. Metric definitions: "
             f"{', '.join(METRICS)}.</p>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(title)}</title><style>{_CSS}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")
