"""report.html: one self-contained page (inline CSS, figures as base64 PNG, no scripts, no
network). Every string that comes from the scenario file or a history is written through
text.html_text: HTML-escaped, with control and other invisible characters shown as escapes."""
from __future__ import annotations

import base64
import datetime as _dt

from ..analysis.horizon import horizon_warnings
from ..analysis.ranking import RANK_LABELS, rank_label, rule_text
from ..analysis.mitigation import mitigation_sentences, risk_mode_text
from ..definitions import METRICS
from .diff import NightDiff, input_change_line, judged_by, percent_change
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
  table.ranking { font-size: 8.5pt; }
  table.ranking th, table.ranking td { padding: 2px 3px; }
  table.ranking td.name { white-space: normal; overflow-wrap: anywhere; }
  table.ranking td.n .ci { font-size: 7.5pt; }
  table.ranking tr, .warn { break-inside: avoid; }
  .swatch, .warn, th { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
}
"""

_LABELS = {"trough_depth": "trough depth (H100-eq)", "trough_days": "trough days",
           "shortfall_gpu_days": "shortfall (H100-eq × days)", "homeless_days": "homeless days",
           "completion_day": "completion day", "power_violation": "P(power over cap)"}


def _img(png: bytes, alt: str, caption: str, extra: str = "") -> str:
    """A figure with its caption (plain text, escaped here) and `extra`, HTML built by the
    caller from escaped parts (a table of what the lines are)."""
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html_text(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html_text(caption)}{extra}</figcaption></figure>")


def _paths_table(paths: dict, colors: dict[str, str], columns: list) -> str:
    """What each drawn scenario line is: per strategy and quantile, the scenario's index and
    its own numbers. A scenario picked at two quantiles (equal values) is one row."""
    if not paths:
        return ""
    rows = []
    for name, picked in paths.items():
        groups: list[list] = []
        for path in picked:
            if groups and groups[-1][0].scenario == path.scenario:
                groups[-1].append(path)
            else:
                groups.append([path])
        for i, group in enumerate(groups):
            first = (f'<td class="name" rowspan="{len(groups)}">{_swatch(name, colors)}</td>'
                     if i == 0 else "")
            style = "thick, strategy colour" if group[0] is picked[0] else "thin, black"
            if len(group) > 1:
                style = "both lines, on each other"
            line = " and ".join(p.label for p in group)
            rows.append(f"<tr>{first}<td>{line} <span class='ci'>({style})</span></td>"
                        f"<td class='n'>{group[0].scenario:,}</td>"
                        + "".join(f"<td class='n'>{cell(group[0])}</td>" for _, cell in columns)
                        + "</tr>")
    head = "".join(f"<th class='n'>{html_text(title)}</th>" for title, _ in columns)
    return ("<div class='scroll'><table><tr><th>strategy</th><th>line: the scenario at</th>"
            f"<th class='n'>scenario index</th>{head}</tr>" + "".join(rows) + "</table></div>")


def _band_caption(what: str, samples: int, severity: str, reason: str, ends: str) -> str:
    return (f"Shaded: at each day, the P10 to P90 of {what} over the {samples:,} scenarios. Its "
            "edges are percentiles taken day by day, not scenarios: no scenario follows them, "
            "and one scenario's dip can reach far below the lower edge. Lines: whole scenarios, "
            "replayed from their draws and drawn as they happened, in continuous time: per "
            "strategy the scenario at the P50 (thick, strategy colour) and the one at the P90 "
            f"(thin, black) of {severity} (nearest rank; of scenarios with equal values, the "
            f"lowest index). {reason} The table gives each line's scenario and its own numbers, "
            f"which are not percentiles. {ends}")


def _horizon_note(plan) -> str:
    """The band charts stop at the horizon, as the metrics do: say so, not silently."""
    return (f" The day axis ends at the horizon, day {fmt(plan.horizon)}, where the metrics "
            "stop counting; capacity after it is not drawn (the completion chart shows how "
            "often a plan is not complete by then).")


def _fan_figure(figures, s: dict, plan, colors: dict[str, str]) -> str:
    caption = _band_caption(
        "capacity in service", s["samples"], "shortfall against demand",
        "Shortfall picks them because it counts depth and duration together, against demand, "
        "and differs from scenario to scenario, where trough depth often takes a few values "
        "only.", f"Dashed: baseline B = {fmt(plan.baseline)} H100-eq; dotted: demand."
        + _horizon_note(plan))
    columns = [
        ("shortfall (H100-eq × d)", lambda p: fmt(p.metrics["shortfall_gpu_days"])),
        ("trough depth (H100-eq)", lambda p: fmt(p.metrics["trough_depth"])),
        ("lowest capacity (H100-eq)", lambda p: fmt(p.total.minimum())),
        ("days below baseline", lambda p: fmt(p.metrics["trough_days"]))]
    table = _paths_table(getattr(figures, "paths", {}).get("fan"), colors, columns)
    return _img(figures["fan"], "fan charts of capacity over time per strategy", caption, table)


def _island_figure(figures, s: dict, plan, colors: dict[str, str]) -> str:
    caption = _band_caption(
        "the largest island's capacity", s["samples"], "homeless days",
        "Homeless days (the time the largest job has no island big enough) pick them, since "
        "this chart is about the largest job.",
        f"Red dashed: the largest job ({fmt(plan.largest_job)} H100-eq)." + _horizon_note(plan))
    columns = [
        ("homeless days", lambda p: fmt(p.metrics["homeless_days"])),
        ("lowest largest island (H100-eq)", lambda p: fmt(p.largest.minimum()))]
    table = _paths_table(getattr(figures, "paths", {}).get("island"), colors, columns)
    return _img(figures["island"], "largest island capacity over time", caption, table)


def _completion_caption(axis) -> str:
    """What the completion chart shows, and where (and why) its day axis is cut."""
    text = ("Share of scenarios in which the migration is complete by each day (the last old "
            "unit removed and the last new unit accepted; not cut at the horizon).")
    if axis is None:
        return text
    if axis.cut:
        if axis.widest is not None:
            text += (f" The day axis ends at day {fmt(axis.right)}, just past the largest P99.9 "
                     f"of any strategy ({axis.widest}: day {fmt(axis.p999[axis.widest])})")
        else:
            text += (f" The day axis ends at day {fmt(axis.right)}, just past the horizon, which "
                     "is later than every strategy's P99.9")
        text += (f"; the tail beyond it is cut: up to {max(axis.beyond.values()):.2%} of a "
                 f"strategy's scenarios complete later, the latest on day {fmt(axis.latest)} "
                 f"({axis.latest_strategy}).")
    else:
        text += f" Every completion lies on the axis (the latest: day {fmt(axis.latest)})."
    never = {name: k for name, k in axis.never.items() if k}
    if never:
        text += " Never complete (a burn-in that never passes): " + ", ".join(
            f"{name} in {k:,} scenario{'' if k == 1 else 's'}" for name, k in never.items()) + "."
    return text


def _swatch(name: str, colors: dict[str, str]) -> str:
    return f'<span class="swatch" style="background:{colors[name]}"></span>{html_text(name)}'


def _ci(m: dict, key: str = "p90_ci") -> str:
    """[low, high] of the interval m[key], or [n/a] where summary.json has none (null: too
    few scenarios for it to exist)."""
    if m.get(key) is None:
        return "[n/a]"
    low, high = m[key]
    return f"[{fmt(low)}, {fmt(high)}]"


def _horizon_date(summary: dict) -> str:
    """' (Fri 2027-07-23), day 0 = Mon 2027-01-04' after the horizon when the run has a
    start_date; empty otherwise."""
    from ..milestones import weekday

    start, end = summary.get("start_date"), summary.get("horizon_date")
    if not start:
        return ""
    return (f" ({weekday(end)} {html_text(end)})" if end else "") + \
        f" · day 0 = {weekday(start)} {html_text(start)}"


def _dated_cell(m: dict, key: str) -> str:
    """The completion day's percentile `key`, with its weekday and date below it when the run
    has a start_date (summary.json's completion_date)."""
    from ..milestones import weekday

    iso = (m.get("completion_date") or {}).get(key)
    day = fmt(m["completion_day"][key])
    return f"{day}<br><small>{weekday(iso)} {html_text(iso)}</small>" if iso else day


def ranking_table(summary: dict, colors: dict[str, str]) -> str:
    """The ranking: the rule (ties within Monte Carlo noise), the table (P50, P90 with its 95%
    interval and P99 of each ranked metric; a shared rank as '3='; the criterion that decided
    each place) and a warning box for every strategy whose completion often lies beyond the
    horizon (mcrisk.analysis.horizon)."""
    ranked = ("trough_depth", "trough_days", "shortfall_gpu_days")
    head = ("<tr><th class='n' rowspan='2'>rank</th><th rowspan='2'>strategy</th>"
            + "".join(f'<th class="g" colspan="3">{html_text(_LABELS[m])}</th>' for m in ranked)
            + f'<th class="g">{_LABELS["homeless_days"]}</th>'
            f'<th class="g" colspan="2">{_LABELS["completion_day"]}</th>'
            f'<th class="n" rowspan="2">{_LABELS["power_violation"]}</th>'
            "<th rowspan='2'>decided by</th></tr><tr>"
            + '<th class="n">P50</th><th class="n">P90 [95% CI]</th><th class="n">P99</th>' * 3
            + '<th class="n">P90 [95% CI]</th><th class="n">P50</th><th class="n">P90</th></tr>')

    def p90(m: dict) -> str:
        return f'<td class="n"><b>{fmt(m["p90"])}</b><br><span class="ci">{_ci(m)}</span></td>'

    ranks = summary.get("ranks") or {}
    rows = []
    for position, name in enumerate(summary["ranking"], start=1):
        m = summary["strategies"][name]
        entry = ranks.get(name)
        label = rank_label(entry) if entry else str(position)
        cells = [f'<td class="n">{label}</td><td class="name">{_swatch(name, colors)}</td>']
        for metric in ranked:
            cells.append(f'<td class="n">{fmt(m[metric]["p50"])}</td>{p90(m[metric])}'
                         f'<td class="n">{fmt(m[metric]["p99"])}</td>')
        cells.append(p90(m["homeless_days"]))
        cells.append("".join(f'<td class="n">{_dated_cell(m, key)}</td>' for key in ("p50", "p90")))
        p = m["power_violation"]["probability"]
        cells.append(f'<td class="n{" yes" if p > 0 else ""}">{p:.1%}</td>')
        decided = entry.get("decided_by") if entry else None
        tied = entry.get("tied_with") if entry else []
        cells.append("<td>" + (html_text(RANK_LABELS.get(decided, decided)) if decided else "–")
                     + (f'<br><span class="ci">tied with {html_text(", ".join(tied))}</span>'
                        if tied else "") + "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rule = summary.get("ranking_rule")
    text = (f'<p class="rule">{html_text(rule_text(rule)) + " " if rule else ""}Bold: the P90s; '
            "grey: their distribution-free 95% confidence intervals.</p>")
    warnings = "".join(f'<div class="warn horizon"><p>WARNING: {html_text(w)}</p></div>'
                       for w in horizon_warnings(summary))
    return (f'{text}<div class="scroll"><table class="ranking">{head}{"".join(rows)}</table>'
            f"</div>{warnings}")


def _kw(value: float) -> str:
    """kW with one decimal (draws are sums like 8 x 326.4); -0.0 shown as 0.0."""
    return f"{0.0 if abs(value) < 0.05 else value:,.1f}"


def _peak_cells(h) -> str:
    """P50, P90 and highest peak draw; equal neighbours share one cell (colspan), so one
    number is not repeated as three, with a note saying which statistics it is."""
    stats = [("P50", h.peak_p50_kw), ("P90", h.peak_p90_kw), ("highest", h.peak_max_kw)]
    groups: list[list[tuple[str, float]]] = []
    for stat in stats:
        if groups and groups[-1][-1][1] == stat[1]:
            groups[-1].append(stat)
        else:
            groups.append([stat])
    cells = []
    for group in groups:
        if len(group) == 1:
            cells.append(f"<td class='n'>{_kw(group[0][1])}</td>")
            continue
        if h.peak_min_kw == h.peak_max_kw:
            note = "in every scenario"
        else:
            note = " = ".join(label for label, _ in group)
        cells.append(f"<td class='n' colspan='{len(group)}' style='text-align:center'>"
                     f"{_kw(group[0][1])} <span class='ci'>({note})</span></td>")
    return "".join(cells)


def power_table(hall_power: dict, colors: dict[str, str]) -> str:
    """Per strategy and hall: cap, peak draw (P50, P90, highest; merged where equal),
    headroom = cap - the highest peak in any scenario (kW and % of the cap), P(over cap)."""
    rows = []
    for name, halls in hall_power.items():
        for i, h in enumerate(halls):
            first = f'<td class="name" rowspan="{len(halls)}">{_swatch(name, colors)}</td>' if i == 0 else ""
            flag = " yes" if h.probability_over > 0 else ""
            short = " yes" if h.headroom_kw < 0 else ""
            share = "n/a" if h.headroom_share is None else f"{h.headroom_share:.1%}"
            rows.append(f"<tr>{first}<td>{html_text(h.hall)}</td><td class='n'>{_kw(h.cap_kw)}</td>"
                        f"{_peak_cells(h)}"
                        f"<td class='n{short}'>{_kw(h.headroom_kw)}</td>"
                        f"<td class='n{short}'>{share}</td>"
                        f"<td class='n{flag}'>{h.probability_over:.2%}</td></tr>")
    return ("<div class='scroll'><table><tr><th rowspan='2'>strategy</th><th rowspan='2'>hall</th>"
            "<th class='n' rowspan='2'>cap (kW)</th>"
            "<th class='n' colspan='3' style='text-align:center'>peak draw over scenarios (kW)</th>"
            "<th class='n' colspan='2' style='text-align:center'>headroom: cap − highest peak</th>"
            "<th class='n' rowspan='2'>P(over cap)</th></tr>"
            "<tr><th class='n'>P50</th><th class='n'>P90</th><th class='n'>highest</th>"
            "<th class='n'>kW</th><th class='n'>% of cap</th></tr>"
            + "".join(rows) + "</table></div>")


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


def _input_items(changes) -> str:
    """Changed inputs as list items; html_text escapes a user's '->' as '-&gt;', so the only
    ' -> ' left is the line's own arrow."""
    return "".join(f"<li>{input_change_line(c, code=_code, escape=html_text)}</li>"
                   for c in changes).replace(" -> ", " → ")


def _code(text) -> str:
    return f"<code>{html_text(text)}</code>"


def _change_item(c) -> str:
    return (f"<li><b>{html_text(c.strategy)}</b> {html_text(c.metric)} {c.stat.upper()}: "
            f"{fmt(c.old)} → {fmt(c.new)} ({_signed_fmt(c.delta)}, {percent_change(c)}; "
            f"{html_text(c.method)})</li>")


def _signed_fmt(value: float) -> str:
    """+1.5, −1.5 (a minus sign, as diff.md writes it), 0."""
    if value != value:
        return fmt(value)
    return ("+" if value > 0 else "−" if value < 0 else "") + fmt(abs(value))


def diff_html(diff: NightDiff) -> str:
    """The night-over-night section, rendered from the same data as diff.md: inputs and run
    settings that changed, the reported changes (beyond noise and material) largest first,
    and every compared statistic with its verdict."""
    parts = [f"<p>Compared with <code>{html_text(diff.previous)}</code> "
             f"({html_text(diff.pairing_note)}). {html_text(judged_by(diff))}</p>",
             _notes_html(diff.skipped), "<h3>Scenario inputs that changed</h3>"]
    if diff.same_file:
        parts.append("<p>None: the scenario file is byte-for-byte the same.</p>")
    elif not diff.input_changes:
        parts.append("<p>No keys changed (comments or layout only).</p>")
    else:
        parts.append("<ul>" + _input_items(diff.input_changes) + "</ul>")
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            parts.append(f"<p>Strategies {label}: {html_text(', '.join(names))}</p>")
    if diff.run_changes:
        parts.append("<h3>Run settings that changed</h3><ul>"
                     + _input_items(diff.run_changes) + "</ul>")
    parts.append("<h3>Changes beyond Monte Carlo noise, largest first</h3>")
    reported = diff.reported
    parts.append("<ul>" + "".join(_change_item(c) for c in reported) + "</ul>" if reported
                 else "<p>None.</p>")
    if diff.immaterial:
        parts.append(f"<p>{len(diff.immaterial)} more beyond noise but below the materiality "
                     "threshold, not reported as changes (see the table).</p>")
    rows = "".join(
        f"<tr><td>{html_text(c.strategy)}</td><td>{html_text(c.metric)}</td><td>{c.stat}</td>"
        f"<td class='n'>{fmt(c.old)}</td><td class='n'>{fmt(c.new)}</td>"
        f"<td class='n'>{_signed_fmt(c.delta)}</td>"
        f"<td class='{'yes' if c.reported else ''}'>"
        f"{'yes' if c.reported else html_text('no: ' + c.why_not_reported().split(' (')[0])}</td>"
        f"<td class='ci'>{html_text(c.method)}</td></tr>" for c in diff.changes)
    parts.append("<details><summary>All compared statistics</summary><div class='scroll'><table>"
                 "<tr><th>strategy</th><th>metric</th><th>stat</th><th class='n'>last night</th>"
                 "<th class='n'>tonight</th><th class='n'>change</th><th>reported</th>"
                 f"<th>how judged</th></tr>{rows}</table></div></details>")
    return "".join(parts)


_TOP_INPUTS = 12      # changed inputs named in the box at the top; the diff section has all
_TOP_CHANGES = 5


def alerts_html(alerts, diff: NightDiff | None, notes: tuple[str, ...] = ()) -> str:
    """The nightly box at the top of the page: --fail-if breaches (condition, strategy,
    value), conditions that hold or were skipped, the scenario inputs that changed since the
    night compared with (named: key, old → new) and its largest reported changes."""
    breaches = list(alerts.breaches) if alerts else []
    conditions = list(alerts.conditions) if alerts else []
    parts = []
    if breaches:
        parts.append(f"<p><b>{len(breaches)} --fail-if breach{'es' if len(breaches) != 1 else ''}"
                     "</b> (the nightly exits 3):</p><ul>" + "".join(
                         f"<li><code>{html_text(b.condition.text)}</code>: "
                         f"<b>{html_text(b.strategy)}</b> {html_text(b.condition.metric)} "
                         f"{html_text(b.condition.stat.upper())}{' change' if b.condition.delta else ''}"
                         f" = <b>{html_text(f'{b.value:,.6g}')}</b> "
                         f"{html_text(b.condition.op)} {html_text(f'{b.condition.threshold:g}')}"
                         + (f" <span class='ci'>({html_text(b.detail)})</span>" if b.detail else "")
                         + "</li>" for b in breaches) + "</ul>")
    elif conditions:
        parts.append(f"<p>No --fail-if condition breached ({len(conditions)} checked: "
                     + ", ".join(f"<code>{html_text(c.text)}</code>" for c in conditions)
                     + ").</p>")
    else:
        parts.append("<p>No --fail-if conditions were set.</p>")
    condition_notes = list(alerts.notes) if alerts else []
    if condition_notes or notes:
        parts.append("<ul>" + "".join(f"<li>{html_text(n)}</li>"
                                      for n in [*notes, *condition_notes]) + "</ul>")
    if diff is not None:
        parts.append(f"<p>Since <code>{html_text(diff.previous)}</code>: ")
        if diff.same_file:
            parts.append("the scenario file is the same (same sha256).")
        elif not diff.input_changes:
            parts.append("the scenario file changed in comments or layout only.")
        else:
            shown = diff.input_changes[:_TOP_INPUTS]
            more = len(diff.input_changes) - len(shown)
            parts.append(f"{len(diff.input_changes)} scenario input"
                         f"{'s' if len(diff.input_changes) != 1 else ''} changed:</p><ul>"
                         + _input_items(shown)
                         + (f"<li>and {more} more (under Night over night)</li>" if more else "")
                         + "</ul><p>")
        if diff.run_changes:
            parts.append(" Run settings changed: " + "; ".join(
                html_text(input_change_line(c, code=str, escape=str)) for c in diff.run_changes)
                + ".")
        reported = diff.reported
        parts.append(f" {len(reported)} change{'s' if len(reported) != 1 else ''} beyond Monte "
                     "Carlo noise and material" + (", the largest:" if reported else ".") + "</p>")
        if reported:
            parts.append("<ul>" + "".join(_change_item(c) for c in reported[:_TOP_CHANGES])
                         + (f"<li>and {len(reported) - _TOP_CHANGES} more (under Night over "
                            "night)</li>" if len(reported) > _TOP_CHANGES else "") + "</ul>")
    box = "warn" if breaches else "findings"
    return (f'<h2 id="alerts">Tonight: alerts and changes</h2>'
            f'<div class="{box}">{"".join(parts)}</div>')


def trend_html(trend, chart: bytes | None) -> str:
    """The trend section: the chart (or why there is none yet) and the nights left out."""
    parts = []
    if chart is None:
        parts.append("<p>This is the first readable night of this scenario in the history: "
                     "the trend starts with the next night.</p>")
    else:
        n = len(trend.nights)
        parts.append(_img(chart, "P90 of trough depth, trough days, shortfall and completion "
                                 "per night",
                          f"Each strategy's P90 over the last {n} nights of this scenario "
                          "(from each night's summary.json), and its 95% interval shaded: a "
                          "step inside the intervals of both nights may be Monte Carlo noise "
                          "(Night over night judges tonight's). Dotted vertical lines: the "
                          "scenario file changed before that night."))
    if trend.notes:
        parts.append(_notes_html(trend.notes))
    return "".join(parts)


def _notes_html(notes) -> str:
    """Nightly remarks (an earlier night that could not be compared with, and why)."""
    if not notes:
        return ""
    return ('<div class="warn"><ul>' + "".join(f"<li>{html_text(n)}</li>" for n in notes)
            + "</ul></div>")


def _risk_mode_html(s: dict) -> str:
    """A visible line near the top when the run's risk register is not the file's."""
    risks = s.get("risks", {})
    if risks.get("mode", "file") == "file" and not risks.get("disabled_by_cli"):
        return ""
    return ('<div class="findings"><p><b>Risk register set on the command line</b>: '
            f"{html_text(risk_mode_text(risks))}. A plain run (<code>--risks file</code>) "
            "takes the register as the scenario file writes it.</p></div>")


_MITIGATION_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                       "completion_day")


def _mitigation_section(s: dict, colors: dict[str, str]) -> list[str]:
    """The value of mitigation: the same worlds with the register pre vs post mitigation,
    per strategy and metric (summary.json's `mitigation`); nothing when there is none."""
    m = s.get("mitigation")
    if m is None:
        return []
    risks = ", ".join(html_text(r) for r in m["risks"])
    head = ['<h2 id="mitigation">Value of mitigation</h2>']
    if "strategies" not in m:
        return head + [f"<p>Risks with mitigated values: {risks}. Value of mitigation "
                       f"{html_text(m['skipped'])}.</p>"]
    intro = (f"<p>The same {m['samples']:,} sampled worlds (seed {html_text(str(m['seed']))}) "
             f"with the risks {risks} as assessed (pre) and after mitigation (post): every "
             "draw is addressed by name, so the two differ only by the risks' values. This run "
             f"is the {html_text(m['run_is'])} side; it simulated the "
             f"{html_text(m['simulated'])} side too, one more simulation of "
             f"{m['samples']:,} scenarios ({m['wall_seconds']:.2f} s). Each cell is the "
             "difference pre − post, scenario by scenario (positive: mitigation lowers the "
             "metric, which is better): bold, its mean with a 95% interval; below, the P90 "
             "of the per-scenario difference (not the difference of two P90s) with its 95% "
             "interval, and the share of scenarios in which mitigation lowers or raises the "
             "metric. Mitigation is said to help or hurt only where the interval of the mean "
             "excludes 0.</p>")
    order = [n for n in s.get("ranking", []) if n in m["strategies"]]
    order += [n for n in m["strategies"] if n not in order]
    sentences = ('<div class="findings">' + "".join(
        f"<p>{html_text(t)}</p>" for t in mitigation_sentences(m, order)) + "</div>")
    metrics = [k for k in _MITIGATION_METRICS if any(k in per for per in m["strategies"].values())]
    rows = []
    for name in order:
        cells = []
        for metric in metrics:
            d = m["strategies"][name][metric]
            verdict = d["verdict"].replace("_", " ")
            mark = {"helps": "<b>helps</b>", "hurts": "<span class='yes'>hurts</span>"}.get(
                d["verdict"], html_text(verdict))
            cells.append(
                f"<td class='n'><b>{fmt(d['mean'])}</b> <span class='ci'>{_ci(d, 'mean_ci')}"
                f"</span> {mark}<br><span class='ci'>P90 {fmt(d['p90'])} {_ci(d)}<br>lower in "
                f"{d['p_a_worse']:.1%}, higher in {d['p_a_better']:.1%}</span></td>")
        rows.append(f"<tr><td class='name'>{_swatch(name, colors)}</td>{''.join(cells)}</tr>")
    header = "".join(f"<th class='n'>{html_text(_LABELS.get(k, k))}</th>" for k in metrics)
    table = (f"<div class='scroll'><table><tr><th>strategy</th>{header}</tr>"
             + "".join(rows) + "</table></div>")
    return head + [intro, sentences, table]


def _demand_text(points) -> str:
    """The demand points in words: 'day 0: 2,048; day 150: 2,048; day 360: 2,816 H100-eq'."""
    shown = points if len(points) <= 8 else (*points[:3], None, *points[-3:])
    return "; ".join("…" if p is None else f"day {fmt(p[0])}: {fmt(p[1])}" for p in shown) \
        + " H100-eq"


def definitions_html(run) -> str:
    """The section 'Definitions and assumptions': what capacity, the baseline and each metric
    mean, how demand is read, the horizon, what a row retrofit waits for, and the statistics,
    in the words of docs/metrics.md, with this run's values (horizon, baseline, largest job,
    demand points, crews, scenarios)."""
    s, scenario, plan = run.summary, run.scenario, run.plan
    horizon, baseline, job = fmt(plan.horizon), fmt(plan.baseline), fmt(plan.largest_job)
    crews = scenario.retrofit.crews
    drawn = [t.id for t in scenario.unit_types if t.performance is not None]
    ramped = [t.id for t in scenario.unit_types if t.ramp is not None]
    realism = ""
    if drawn:
        realism += (" The per-GPU performance of " + ", ".join(html_text(t) for t in drawn)
                    + " is drawn once per scenario.")
    if ramped:
        realism += (" A unit of " + ", ".join(html_text(t) for t in ramped) + " enters at a "
                    "fraction of its capacity that rises in steps (a software-maturity ramp); "
                    "the steps never overstate capacity.")
    metrics = [
        ("trough_depth", "H100-eq",
         "the deepest fall below the baseline: the largest B − C(t) over t in [0, H), over "
         "intervals of positive length (0 when C never falls below B)"),
        ("trough_days", "days", "the total time in [0, H) during which C(t) is below B"),
        ("shortfall_gpu_days", "H100-eq × days",
         "the integral over [0, H) of max(0, D(t) − C(t)): capacity missing against demand, "
         "computed exactly (no day grid)"),
        ("homeless_days", "days",
         f"the total time in [0, H) during which no single fabric island holds the largest "
         f"job (J = {job} H100-eq; jobs never span islands)"),
        ("completion_day", "day",
         "the later of the last old unit's removal end and the last new unit's acceptance; "
         "<b>not cut at H</b>: it can lie after the horizon"),
        ("power_violation", "share of scenarios",
         "whether some hall's draw exceeds its power cap at any time, after the horizon too "
         "(old units draw until removed, new units from install start)"),
    ]
    table = ("<table><tr><th>metric</th><th>definition (per scenario and strategy)</th>"
             "<th>unit</th></tr>" + "".join(
                 f"<tr><td><code>{k}</code></td><td>{d}</td><td>{u}</td></tr>"
                 for k, u, d in metrics) + "</table>")
    items = [
        "<b>Capacity in service</b> C(t): the sum over the units in service of GPUs × "
        "per-GPU performance relative to one H100 (H100-eq). An old unit counts from day 0 "
        "until its drain starts: its capacity is lost at drain start, before the drain and "
        "removal. A new unit counts from its acceptance: burn-in passed and its fabric island "
        f"ready.{realism} Events at the same instant apply together, so a drain triggered by "
        "an acceptance makes no dip; a dip of zero length is no dip.",
        f"<b>Baseline</b> B = {baseline} H100-eq: the capacity in service at day 0. “Below the "
        "baseline” means C(t) &lt; B by more than 1e-9 × B, so float rounding never makes a "
        "phantom trough.",
        f"<b>Demand</b> D(t) is read piecewise linearly between the scenario's points "
        f"({_demand_text(scenario.demand.points)}), and flat before the first point and "
        "after the last.",
        f"<b>Horizon</b> H = {horizon} days: trough depth, trough days, shortfall and homeless "
        "days count the time from day 0 to H only; events after H change none of them. "
        "Completion is not cut at H. Where a strategy completes after H, its trough days and "
        "shortfall are lower bounds; the findings say in how many scenarios.",
        "<b>Row retrofit</b> (an air-cooled row that receives liquid-cooled units): it starts "
        "once the row is empty (every old unit in it removed), its hall is energized and a "
        f"crew is free. {crews} crew{'s' if crews != 1 else ''} take{'s' if crews == 1 else ''}"
        " rows in the order they become ready, ties to the row listed first in the scenario "
        "file. Installs and burn-ins are not crew-limited. A new unit's install starts when "
        "both its shipment has arrived and its position is ready (row empty, hall energized, "
        "retrofit done if needed).",
        f"<b>Scenarios</b>: {s['samples']:,} sampled worlds; every strategy plays the same "
        "worlds (common random numbers), so strategies differ only by their plan.",
        "<b>Percentiles</b> (P50, P90, P99) are over the scenarios, with numpy.quantile's "
        "default linear interpolation; at P90, about 9 scenarios in 10 do no worse. Percentiles of "
        "different metrics are separate: the P90 trough depth and the P90 trough days can come "
        "from different scenarios. The <b>P90 interval</b> is a distribution-free 95% "
        "confidence interval from binomial order statistics: two sampled values that hold the "
        "true P90 with probability at least 95%; it needs at least 36 scenarios.",
        "<b>Comparisons</b> between strategies are paired: the difference scenario by "
        "scenario, on the same worlds, with a normal-approximation 95% interval of its mean. "
        "The findings claim a difference only when that interval excludes 0 (or the "
        "ranking's paired test separates the two); their counts (“in 19,998 of 20,000 "
        "scenarios”) are exact counts over the sampled scenarios.",
    ]
    return ('<h2 id="definitions">Definitions and assumptions</h2>'
            "<p>What the numbers in this report mean (docs/metrics.md has the full "
            "definitions). H is the horizon, C(t) the capacity in service, B the baseline, "
            "D(t) demand.</p>" + table
            + "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>")


def _provenance(run, report_seconds: float | None, run_label: str | None) -> str:
    s = run.summary
    rows = [("scenario", f"<code>{html_text(s['scenario'])}</code>"),
            ("scenario sha256", f"<code>{html_text(s['scenario_sha256'])}</code>"),
            ("scenario name", html_text(s.get("scenario_name", ""))),
            ("samples", f"{s['samples']:,}"), ("seed", html_text(str(s["seed"]))),
            ("backend", f"{html_text(s['backend'])} ({html_text(s.get('backend_reason', ''))})"),
            ("mcrisk version", html_text(s["mcrisk_version"])), ("random numbers", html_text(s["rng"])),
            ("chunk size", f"{s.get('chunk_size', 0):,}"),
            *((("start date (day 0)", html_text(s["start_date"])),
               ("horizon", f"day {fmt(s['horizon_days'])}{_horizon_date(s).split(' · ')[0]}; a day t "
                "falls on start date + floor(t)"))
              if s.get("start_date") else ()),
            ("simulation wall time", f"{s['wall_seconds']:.2f} s (incl. streaming the tables)"),
            ("run created (UTC)", html_text(s.get("created_utc", "")))]
    if report_seconds is not None:
        rows.append(("report wall time", f"{report_seconds:.2f} s"))
    if run_label:
        rows.insert(0, ("nightly run", f"<code>{html_text(run_label)}</code>"))
    if "risks" in s:
        rows.append(("risk register", html_text(risk_mode_text(s["risks"]))))
    rows.append(("percentiles", "P50/P90/P99 over scenarios as numpy.quantile's default (linear); "
                 "P90 CI: distribution-free, binomial order statistics; capacity bands: "
                 "numpy 'inverted_cdf' at integer days (events at time ≤ d count)"))
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _schedule_section(run, colors: dict[str, str]) -> list[str]:
    """Milestones as a schedule (mcrisk.report.gantt), when the run collected them."""
    from .gantt import schedule_html

    section = schedule_html(run, colors)
    return ['<h2 id="schedule">Schedule: milestones</h2>', section] if section else []


def render_report(run, figures: dict[str, bytes], paragraphs: list[str], colors: dict[str, str],
                  diff: NightDiff | None = None, run_label: str | None = None,
                  report_seconds: float | None = None, notes: tuple[str, ...] = (),
                  alerts=None, trend=None) -> str:
    """The whole page as a string. `run` is a RunResult with detail; figures as PNG bytes.

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
            f'{_horizon_date(s)} · '
            f'{html_text(s.get("created_utc", ""))}'
            + (f" · nightly run <code>{html_text(run_label)}</code>" if run_label else "") + "</p>",
            _risk_mode_html(s),
            "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in (
                ("findings", "Findings"), ("ranking", "Ranking"), ("drivers", "Drivers"),
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
            '<h2 id="findings">Findings</h2><div class="findings">'
            + "".join(f'<p class="{"warn" if p in warn else ""}">{html_text(p)}</p>'
                      for p in paragraphs) + "</div>",
            '<h2 id="ranking">Ranking</h2>',
            ranking_table(s, colors),
            '<h2 id="drivers">What drives the P90 trough</h2>'
            "<p>Inputs ranked by their rank correlation with the metric over "
            f"{s['drivers']['scenarios']:,} scenarios, and how far each sits from its mean (its "
            "own unit, days) in the scenarios ranked 85–95% on the metric.</p>",
            drivers_table(s, colors),
            '<h3>Against the leader, world by world</h3>', paired_table(s, colors)]
    body += _mitigation_section(s, colors)
    if diff is not None:
        body += ['<h2 id="diff">Night over night</h2>', diff_html(diff)]
    elif notes:
        body += ['<h2 id="diff">Night over night</h2>', _notes_html(notes)]
    if trend is not None:
        body += ['<h2 id="trend">Trend across nights</h2>', trend_html(*trend)]
    body += ['<h2 id="capacity">Capacity over time</h2>',
             _fan_figure(figures, s, plan, colors),
             '<h2 id="trough">Trough: depth, duration and shortfall</h2>',
             _img(figures["trough"], "exceedance curves of trough depth, days and shortfall",
                  "Probability that the metric exceeds the value on the x-axis, over all "
                  "scenarios; read a strategy's P90 where its curve crosses the dotted 1-in-10 "
                  "line. Curves are drawn widest first, so one that runs under another shows "
                  "at its edges; strategies with identical curves are dashed and named under "
                  "the axis."),
             '<h2 id="completion">Completion</h2>',
             _img(figures["completion"], "completion S-curves",
                  _completion_caption(getattr(figures, "completion", None))),
             '<h2 id="homeless">Homeless time of the largest job</h2>',
             _img(figures["homeless"], "exceedance curve of homeless days",
                  f"Probability that the largest job ({fmt(plan.largest_job)} H100-eq) has no "
                  "island big enough for longer than the days on the x-axis, in total over "
                  "the horizon."),
             _island_figure(figures, s, plan, colors),
             '<h2 id="power">Power check per hall</h2>',
             "<p>Peak IT draw of each hall: the highest draw at any time, after the horizon "
             "too (old units draw until removed, new racks from install start), its P50, P90 "
             "and highest over the scenarios (one cell where they are equal); headroom: the cap "
             "minus the highest peak of any scenario; and the probability that the peak "
             "exceeds the cap.</p>",
             power_table(run.detail.hall_power, colors),
             _img(figures["power"], "peak power draw per hall", "Bars: P90 peak draw; tick: the "
                  "highest in any scenario; red line: the hall's cap."),
             *_schedule_section(run, colors),
             '<h2 id="strategies">Strategies</h2>',
             "<table><tr><th>strategy</th><th>plan</th></tr>" + "".join(
                 f"<tr><td class='name'>{_swatch(st.name, colors)}</td><td>{html_text(st.description)}</td></tr>"
                 for st in scenario.strategies) + "</table>",
             definitions_html(run),
             '<h2 id="provenance">Provenance</h2>', _provenance(run, report_seconds, run_label),
             f'<p class="sub">Generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC} by '
             f"mcrisk {html_text(s['mcrisk_version'])}. Metric definitions: "
             f"{', '.join(METRICS)}.</p>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(title)}</title><style>{_CSS}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")
