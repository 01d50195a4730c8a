"""The nightly's parts of report.html: the alerts box at the top, the night-over-night section
(rendered from the same NightDiff as diff.md) and the trend across nights."""
from __future__ import annotations

from ..nightly.diff_text import (change_log_groups, input_change_line, judged_by,
                                 percent_change, top_change_lines)
from ..findings.sentences import fmt
from .parts import figure_html, notes_html
from ..nightly.metric_changes import NightDiff
from ..text import html_text


def _input_items(changes) -> str:
    """Changed inputs as list items; html_text escapes a user's '->' as '-&gt;', so the only
    ' -> ' left is the line's own arrow."""
    return "".join(f"<li>{input_change_line(c, code=_code, escape=html_text)}</li>"
                   for c in changes).replace(" -> ", " → ")


def _code(text) -> str:
    """A key in a code span, escaped."""
    return f"<code>{html_text(text)}</code>"


def _change_item(c) -> str:
    """One reported change as a list item: strategy, metric, old → new, change, how judged."""
    return (f"<li><b>{html_text(c.strategy)}</b> {html_text(c.metric)} {c.stat.upper()}: "
            f"{fmt(c.old)} → {fmt(c.new)} ({_signed_fmt(c.delta)}, {percent_change(c)}; "
            f"{html_text(c.method)})</li>")


def _signed_fmt(value: float) -> str:
    """+1.5, −1.5 (a minus sign, as diff.md writes it), 0."""
    if value != value:
        return fmt(value)
    return ("+" if value > 0 else "−" if value < 0 else "") + fmt(abs(value))


def change_log_html(diff: NightDiff) -> str:
    """The night in words: a line per change, grouped (change_log)."""
    groups = change_log_groups(diff)
    if not groups:
        return ("<h3>The night in words</h3><p>Nothing changed: the same scenario inputs and "
                "no new status facts.</p>")
    return "<h3>The night in words</h3>" + "".join(
        f"<p><b>{html_text(group.capitalize())}</b></p><ul>"
        + "".join(f"<li>{html_text(t)}</li>" for t in texts) + "</ul>" for group, texts in groups)


def lead_html(diff: NightDiff) -> str:
    """The executing plan's figures, their moves and what moved them (lead.lead_lines)."""
    from ..nightly.lead import lead_lines
    if diff.lead is None:
        return ""
    first, *rest = lead_lines(diff.lead)
    items = "".join(f"<li>{html_text(line.strip())}</li>" for line in rest)
    return f"<p><b>{html_text(first)}</b></p><ul>{items}</ul>"


def milestones_html(diff: NightDiff) -> str:
    """Each milestone reached: its actual day against the plan's forecast."""
    from ..nightly.lead import milestone_rows
    if not diff.milestones:
        return ""
    rows = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>"
                   for row in milestone_rows(diff.milestones))
    return ("<h3>Milestones reached: actual against plan</h3><p>The plan's forecast: the P50 "
            "and P90 of tonight's scenario run without a status (what the plan expected before "
            "anything happened), for the executing plan.</p><div class='scroll'><table><tr>"
            "<th>milestone</th><th>actual</th><th>plan P50</th><th>plan P90</th>"
            f"<th>against plan</th></tr>{rows}</table></div>")


def diff_html(diff: NightDiff) -> str:
    """The night-over-night section, rendered from the same data as diff.md: inputs and run
    settings that changed, the reported changes (beyond noise and material) largest first,
    and every compared statistic with its verdict."""
    parts = [f"<p>Compared with <code>{html_text(diff.previous)}</code> "
             f"({html_text(diff.pairing_note)}). {html_text(judged_by(diff))}</p>",
             notes_html(diff.skipped), lead_html(diff), change_log_html(diff),
             milestones_html(diff),
             "<h3>Scenario inputs that changed, key by key</h3>"]
    if diff.same_file:
        parts.append("<p>None: the scenario file is byte-for-byte the same.</p>")
    elif not diff.input_changes:
        parts.append("<p>No keys changed (comments or layout only).</p>")
    else:
        parts.append("<ul>" + _input_items(diff.input_changes) + "</ul>")
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            parts.append(f"<p>Strategies {label}: {html_text(', '.join(names))}</p>")
    if diff.status_change:
        parts.append(f"<h3>Status</h3><p>{html_text(diff.status_change)}</p>")
    if diff.run_changes:
        parts.append("<h3>Run settings that changed</h3><ul>"
                     + "".join(f"<li>{html_text(line)}</li>" for line in diff.run_lines)
                     + "</ul><details><summary>Key by key</summary><ul>"
                     + _input_items(diff.run_changes) + "</ul></details>")
    parts.append("<h3>Changes beyond Monte Carlo noise and material</h3>")
    reported = diff.reported
    if reported:
        top = top_change_lines(diff, escape=html_text)
        if len(top) > 1 and top[-1].startswith("and "):
            top[-1] = top[-1].replace(": diff.md lists every one", ", every one listed below")
        parts.append(f"<p>{len(reported)} reported; the most material first, a strategy's "
                     "column on a line:</p><ul>"
                     + "".join(f"<li>{line.replace(' -> ', ' → ')}</li>" for line in top)
                     + f"</ul><details><summary>Every reported change ({len(reported)}), "
                     "largest relative change first</summary><ul>"
                     + "".join(_change_item(c) for c in reported) + "</ul></details>")
    else:
        parts.append("<p>None.</p>")
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
                         f" = <b>{html_text(b.shown or f'{b.value:,.6g}')}</b> "
                         f"{html_text(b.condition.op)} {html_text(b.condition.threshold_text())}"
                         + (f": {html_text(b.words)}" if b.words else "")
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
        parts.append(lead_html(diff))
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
        if diff.status_change:
            parts.append(f" {html_text(diff.status_change)}")
        if diff.run_lines:
            parts.append(" Run settings changed: " + "; ".join(
                html_text(line) for line in diff.run_lines) + ".")
        reported = diff.reported
        parts.append(f" {len(reported)} change{'s' if len(reported) != 1 else ''} beyond Monte "
                     "Carlo noise and material" + (", the most material (a strategy's column "
                                                   "on a line):" if reported else ".") + "</p>")
        if reported:
            lines = top_change_lines(diff, escape=html_text, top=_TOP_CHANGES)
            if len(lines) > _TOP_CHANGES:
                lines[-1] = lines[-1].replace(": diff.md lists every one",
                                              ", listed under Night over night")
            parts.append("<ul>" + "".join(f"<li>{line.replace(' -> ', ' → ')}</li>"
                                          for line in lines) + "</ul>")
    box = "warn" if breaches else "findings"
    return (f'<h2 id="alerts">Tonight: alerts and changes</h2>'
            f'<div class="{box}">{"".join(parts)}</div>')


def trend_html(trend, chart: bytes | None, burndown: str | None = None,
               burndown_notes: tuple[str, ...] = ()) -> str:
    """The trend section: the chart (or why there is none yet), the executing plan's risk
    burn-down (inline SVG), and the nights left out."""
    parts = []
    if chart is None:
        parts.append("<p>This is the first readable night of this scenario in the history: "
                     "the trend starts with the next night.</p>")
    else:
        n = len(trend.nights)
        parts.append(figure_html(chart, "P90 of trough depth, trough days, shortfall and "
                                 "completion per night",
                                 f"Each strategy's P90 over the last {n} nights of this scenario "
                                 "(from each night's summary.json), and its 95% interval shaded: "
                                 "a step inside the intervals of both nights may be Monte Carlo "
                                 "noise (Night over night judges tonight's). Dotted vertical "
                                 "lines: the scenario file changed before that night."))
    parts.append('<h3 id="burndown">Risk burn-down of the executing plan</h3>')
    if burndown is None:
        parts.append("<p>The burn-down starts with the second night of this scenario.</p>")
    else:
        parts.append(f'<figure class="svg">{burndown}<figcaption>The executing plan\'s P90 '
                     "completion, P90 trough depth and cost (mean and P90) on each night of "
                     "the history, against its status date (as_of; the night's date when a "
                     "night had no status), each P90 with its 95% interval shaded (summary."
                     "json's p90_ci). A falling completion or trough depth is risk burned down. "
                     "The cost counts only from each night's status date to the horizon, so it "
                     "falls as days pass even when nothing changes: a falling cost line is not "
                     "by itself risk burned down.</figcaption></figure>")
    if trend.notes or burndown_notes:
        parts.append(notes_html((*trend.notes, *burndown_notes)))
    return "".join(parts)
