"""The text of a night-over-night comparison: a line per reported change and per changed
input (diff.md, summary.md, report.html, the terminal), how changes were judged, and diff.md.

User strings (run ids, keys, values, strategy names) come from scenario files and the
history: every function takes the escape it writes them through (md_text and md_code by
default; html_text for the report), so that they render literally wherever they go.
"""
from __future__ import annotations

import math

from .input_changes import InputChange, render_value
from .metric_changes import ALPHA, MetricChange, NightDiff
from ..text import md_code, md_text


def plain_number(value: float) -> str:
    """A statistic in a change line: thousands separated, at most two decimals below 100."""
    if value != value:
        return "n/a"
    if math.isinf(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}".rstrip("0").rstrip(".")


def signed_number(value: float) -> str:
    """A change with its sign: +1.5, −1.5 (a minus sign), ±0."""
    if value != value:
        return "n/a"
    text = plain_number(abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def change_line(c: MetricChange, escape=md_text) -> str:
    """One reported change in words: strategy, metric, statistic, old -> new, change, how
    judged (user strings through `escape`)."""
    return (f"{escape(c.strategy)} {c.metric} {c.stat.upper()}: {plain_number(c.old)} -> "
            f"{plain_number(c.new)} ({signed_number(c.delta)}, {percent_change(c)}; "
            f"{escape(c.method)})")


def percent_change(c: MetricChange) -> str:
    """The change as a percentage of last night's value ("from 0" when that was 0)."""
    if c.old == 0:
        return "from 0"
    text = f"{100 * c.delta / abs(c.old):+.3g}%"
    return text.replace("-", "−", 1)          # the minus sign signed_number writes


TOP_CHANGES = 10      # grouped change lines on the terminal and at the top of diff.md


def grouped_changes(diff: NightDiff) -> list[list[MetricChange]]:
    """The reported changes grouped by strategy and column (its mean, P50, P90 and P99 on one
    line), most material first: the six metrics and the total cost before the cost
    components and job columns, then by the largest relative change in the group."""
    from ...core.definitions import METRICS
    groups: dict[tuple[str, str], list[MetricChange]] = {}
    for c in diff.reported:                          # largest relative change first
        groups.setdefault((c.strategy, c.metric), []).append(c)
    order = {"mean": 0, "p50": 1, "p90": 2, "p99": 3, "probability": 4}
    headline = lambda m: m in METRICS or m == "cost_total"  # noqa: E731
    ranked = sorted(groups.values(), key=lambda g: (not headline(g[0].metric), -g[0].relative))
    return [sorted(g, key=lambda c: order.get(c.stat, 9)) for g in ranked]


def grouped_change_line(changes: list[MetricChange], escape=md_text) -> str:
    """One strategy's reported changes of one column on a line: 'big-bang trough_depth: MEAN
    2,048 -> 248, P50 2,048 -> 248 (−87.9%; paired tests, p<1e-300)'."""
    first = changes[0]
    largest = max(changes, key=lambda c: c.relative)
    stats = ", ".join(f"{c.stat.upper()} {plain_number(c.old)} -> {plain_number(c.new)}"
                      for c in changes)
    return (f"{escape(first.strategy)} {first.metric}: {stats} (largest change "
            f"{percent_change(largest)})")


def top_change_lines(diff: NightDiff, escape=md_text, top: int = TOP_CHANGES) -> list[str]:
    """The most material reported changes, grouped (grouped_changes), at most `top` lines,
    and a line counting the rest."""
    groups = grouped_changes(diff)
    lines = [grouped_change_line(g, escape) for g in groups[:top]]
    rest = groups[top:]
    if rest:
        n = sum(len(g) for g in rest)
        lines.append(f"and {n} more reported change{'s' if n != 1 else ''}: diff.md lists "
                     "every one")
    return lines


def input_change_line(change: InputChange, code=md_code, escape=md_text) -> str:
    """One changed scenario input: `changed KEY: old -> new`, `added KEY = v`, `removed KEY
    (was v)`; the key through `code`, values through `escape`."""
    if change.kind == "changed":
        return (f"changed {code(change.key)}: {escape(render_value(change.old))} -> "
                f"{escape(render_value(change.new))}")
    if change.kind == "added":
        return f"added {code(change.key)} = {escape(render_value(change.new))}"
    return f"removed {code(change.key)} (was {escape(render_value(change.old))})"


def judged_by(diff: NightDiff) -> str:
    """How 'beyond noise' and 'material' were decided, in one sentence."""
    test = (f"p < {ALPHA}" if diff.paired else
            f"non-overlapping 95% CIs, or p < {ALPHA} for means and the power probability")
    return f"Beyond noise: {test}. Reported when beyond noise and {diff.materiality.describe()}."


def change_log_groups(diff: NightDiff) -> list[tuple[str, list[str]]]:
    """The night in words, grouped: [(group, [line, ...])] for each group with a line, in
    change_log.GROUPS order (plain text: escape when writing)."""
    from .change_log import GROUPS
    out = []
    for group in GROUPS:
        lines = [line.text for line in diff.change_log if line.group == group]
        if lines:
            out.append((group, lines))
    return out


def lead_markdown(diff: NightDiff) -> list[str]:
    """diff.md's first section: the executing plan, its figures' moves and what moved them."""
    from .lead import lead_lines
    if diff.lead is None:
        return []
    first, *rest = lead_lines(diff.lead)
    return [f"## The executing plan: {md_text(diff.lead.strategy)}", "", md_text(first), "",
            *(f"- {md_text(line.strip())}" if not line.startswith("  ") else
              f"  - {md_text(line.strip())}" for line in rest), ""]


def milestones_markdown(diff: NightDiff) -> list[str]:
    """Each milestone the status has reached: its actual day against the plan's forecast."""
    from .lead import milestone_rows
    if not diff.milestones:
        return []
    return ["## Milestones reached: actual against plan", "",
            "The plan's forecast: the P50 and P90 of tonight's scenario run without a status "
            "(what the plan expected before anything happened), for the executing plan.", "",
            "| milestone | actual | plan P50 | plan P90 | against plan |", "|---|---|---|---|---|",
            *(f"| {' | '.join(md_text(c) for c in row)} |"
              for row in milestone_rows(diff.milestones)), ""]


def change_log_markdown(diff: NightDiff) -> list[str]:
    """diff.md's section 'The night in words': a line per change, grouped."""
    lines = ["## The night in words", ""]
    groups = change_log_groups(diff)
    if not groups:
        lines += ["Nothing changed: the same scenario inputs and no new status facts.", ""]
    for group, texts in groups:
        lines += [f"**{group.capitalize()}**", "", *(f"- {md_text(t)}" for t in texts), ""]
    return lines


def diff_markdown(diff: NightDiff) -> str:
    """diff.md: inputs that changed, reported changes (beyond noise and material, largest
    first), then every compared statistic with its verdict.

    Run ids, keys, values and strategy names come from scenario files and the history: each
    goes through md_text or md_code, so that it renders literally.
    """
    lines = [f"# Night over night: {md_text(diff.current)} vs {md_text(diff.previous)}", "",
             f"Comparison: {md_text(diff.pairing_note)}. {md_text(judged_by(diff))}", ""]
    if diff.skipped:
        lines += ["Later runs that could not be compared with:", "",
                  *(f"- {md_text(note)}" for note in diff.skipped), ""]
    lines += lead_markdown(diff)
    lines += change_log_markdown(diff)
    lines += milestones_markdown(diff)
    lines += ["## Scenario inputs that changed (key by key)", ""]
    if diff.same_file:
        lines.append("None: the scenario file is byte-for-byte the same (same sha256).")
    elif not diff.input_changes:
        lines.append("No keys changed (the file differs only in comments or layout).")
    lines += [f"- {input_change_line(change)}" for change in diff.input_changes]
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            lines.append(f"- strategies {label}: {', '.join(md_text(n) for n in names)}")
    if diff.status_change:
        lines += ["", "## Status", "", md_text(diff.status_change)]
    if diff.run_changes:
        lines += ["", "## Run settings that changed", ""]
        lines += [f"- {md_text(line)}" for line in diff.run_lines]
        lines += ["", "Key by key:", ""]
        lines += [f"- {input_change_line(change)}" for change in diff.run_changes]
    reported, immaterial = diff.reported, diff.immaterial
    lines += ["", "## Changes beyond Monte Carlo noise and material", ""]
    if not reported:
        lines.append("None.")
    else:
        lines += [f"{len(reported)} reported change{'s' if len(reported) != 1 else ''}; "
                  "the most material first, a strategy's column on a line (every one is listed "
                  "under \"Every reported change\" below):", ""]
        lines += [f"- {line}" for line in top_change_lines(diff)]
    if immaterial:
        lines += ["", f"{len(immaterial)} more beyond noise but below the materiality "
                  "threshold, not reported as changes (see the table)."]
    if reported:
        lines += ["", "## Every reported change (largest relative change first)", ""]
        lines += [f"- {change_line(c)}" for c in reported]
    lines += ["", "## All compared statistics", "",
              "| strategy | metric | stat | last night | tonight | change | reported | how judged |",
              "|---|---|---|---:|---:|---:|---|---|"]
    for c in diff.changes:
        verdict = "**yes**" if c.reported else f"no: {md_text(c.why_not_reported().split(' (')[0])}"
        lines.append(f"| {md_text(c.strategy)} | {c.metric} | {c.stat} | {plain_number(c.old)} | "
                     f"{plain_number(c.new)} | {signed_number(c.delta)} | {verdict} | "
                     f"{md_text(c.method)} |")
    return "\n".join(lines) + "\n"
