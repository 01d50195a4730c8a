"""summary.md: the ranking and headline numbers as Markdown, for chat and e-mail.

Every user string goes through text.md_text (inside a line, table cells), text.md_paragraph
(paragraphs) or text.md_code (paths and run ids in code spans), so that it renders literally
in any Markdown client.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..results.mitigation import risk_mode_text
from ..results.horizon import horizon_warnings
from ..core.definitions import METRICS
from ..core.labels import heading, label, share_label
from ..results.ranking import rank_label, rule_text
from .findings.sentences import fmt
from .jobs import jobs_markdown
from .status import executing_markdown, status_markdown
from .text import md_code, md_paragraph, md_text

if TYPE_CHECKING:
    from .nightly.diff import NightDiff


def summary_markdown(summary: dict, paragraphs: list[str], diff: "NightDiff | None" = None,
                     run_label: str | None = None, notes: tuple[str, ...] = (),
                     alerts=None) -> str:
    """summary.md; `notes` are nightly remarks (a comparison that was skipped, and why);
    `alerts`: the nightly's alerts.AlertOutcome, shown first (with the changed inputs)."""
    s = summary
    lines = [f"# mcrisk: {md_text(s.get('scenario_name', s['scenario']))}", "",
             f"{s['samples']:,} scenarios, seed {s['seed']}, backend {md_text(s['backend'])}, "
             f"mcrisk {md_text(s['mcrisk_version'])}, scenario {md_code(s['scenario'])} "
             f"(sha256 {md_text(s['scenario_sha256'][:12])})"
             + (f", nightly run {md_code(run_label)}" if run_label else "") + ".", "",
             *([md_paragraph("Risk register: " + risk_mode_text(s["risks"]) + "."), ""]
               if "risks" in s else []),
             *([md_paragraph(_dates_line(s)), ""] if s.get("start_date") else []),
             *(alerts_markdown(alerts, diff) if alerts is not None else []),
             *executing_markdown(s),
             *status_markdown(s),
             *ranking_markdown(s),
             *costs_markdown(s),
             *jobs_markdown(s),
             *each_mitigation_markdown(s)]
    for paragraph in paragraphs:
        lines += [md_paragraph(paragraph), ""]
    if diff is not None:
        lines += diff_summary_markdown(diff)
    for note in notes:
        lines += ["", f"Note: {md_text(note)}"]
    return "\n".join(lines).rstrip() + "\n"


def _dates_line(s: dict) -> str:
    """Day 0's date and the horizon's, for a run with a start_date."""
    from ..results.milestones import weekday

    end = s.get("horizon_date")
    return (f"Day 0 is {weekday(s['start_date'])} {s['start_date']}; the horizon, day "
            f"{fmt(s['horizon_days'])}, falls on " + (f"{weekday(end)} {end}" if end else "n/a")
            + "; day t falls on day 0 + floor(t) days.")


def _dated(m: dict, key: str) -> str:
    """The completion day's percentile `key`, with its date and weekday when the run has a
    start_date ('48.1 (Sun 2027-02-21)'; summary.json's completion_date)."""
    from ..results.milestones import weekday

    iso = (m.get("completion_date") or {}).get(key)
    day = fmt(m["completion_day"][key])
    return f"{day} ({weekday(iso)} {md_text(iso)})" if iso else day


def ranking_markdown(s: dict) -> list[str]:
    """The ranking table (a shared rank as '3=', the criterion that decided each place), the
    ranking rule in one paragraph, and a WARNING paragraph for every strategy whose
    completion often lies beyond the horizon; ends with a blank line."""
    ranks = s.get("ranks") or {}
    headers = [*(f"{heading(m)} P90" for m in ("trough_depth", "trough_days",
                                               "shortfall_gpu_days", "homeless_days")),
               f"{heading('completion_day')} P50 / P90", share_label("power_violation")]
    lines = ["| rank | strategy | " + " | ".join(headers) + " | decided by |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for position, name in enumerate(s["ranking"], start=1):
        m = s["strategies"][name]
        entry = ranks.get(name)
        decided = entry.get("decided_by") if entry else None
        tied = entry.get("tied_with") if entry else []
        lines.append(
            f"| {rank_label(entry) if entry else position} | {md_text(name)}"
            + (" (executing)" if name == s.get("executing") else "") + " | "
            f"{fmt(m['trough_depth']['p90'])} | "
            f"{fmt(m['trough_days']['p90'])} | {fmt(m['shortfall_gpu_days']['p90'])} | "
            f"{fmt(m['homeless_days']['p90'])} | {_dated(m, 'p50')} / "
            f"{_dated(m, 'p90')} | {m['power_violation']['probability']:.1%} | "
            + (md_text(label(decided)) if decided else "-")
            + (f" (tied with {md_text(', '.join(tied))})" if tied else "") + " |")
    lines.append("")
    if s.get("ranking_rule"):
        lines += [md_paragraph(rule_text(s["ranking_rule"])), ""]
    for warning in horizon_warnings(s):
        lines += [md_paragraph(f"WARNING: {warning}"), ""]
    return lines


def costs_markdown(s: dict) -> list[str]:
    """The cost table under the ranking (the terminal's): per strategy in ranking order the
    mean, P50, P90 and P99 of cost_total and its largest components at the mean, money as
    $1.23M in the run's currency; ends with a blank line. Nothing without costs."""
    from ..results.compare import money_text
    from ..results.costs import largest_components

    block = s.get("costs")
    if not block:
        return []
    currency = block["currency"]
    start, end = block["window_days"]

    def money(value: float | None) -> str:      # md_text: $ never a math delimiter
        return md_text(money_text(value, currency))

    ranks = s.get("ranks") or {}
    lines = [md_paragraph(f"Cost in {currency} over days {start:,.0f} to {end:,.0f}: every "
                          + ("cost counts only what happens before the horizon." if not start
                             else "cost counts only what happens from the status date to the "
                                  "horizon (what was spent before it: the status section).")),
             "",
             "| rank | strategy | cost mean | cost P50 | cost P90 | cost P99 | "
             "largest components at the mean |",
             "|---:|---|---:|---:|---:|---:|---|"]
    for position, name in enumerate(s["ranking"], start=1):
        entry = ranks.get(name)
        per_cost = s["strategies"][name]["costs"]
        total = per_cost["cost_total"]
        parts = ", ".join(f"{md_text(label)} {money(mean)}"
                          for label, mean in largest_components(per_cost))
        lines.append(f"| {rank_label(entry) if entry else position} | {md_text(name)} | "
                     + " | ".join(money(total[key]) for key in ("mean", "p50", "p90", "p99"))
                     + f" | {parts or '-'} |")
    return [*lines, ""]


def each_mitigation_markdown(s: dict) -> list[str]:
    """The value of each mitigation (summary.json's `mitigation.each_risk`): a sentence per
    risk and a table, a row per risk and strategy in ranking order; ends with a blank line.
    Nothing when the run has none."""
    from ..results.mitigation import each_risk_headers, each_risk_sentences, risk_value_cells

    each = (s.get("mitigation") or {}).get("each_risk")
    if not each:
        return []
    costs = "currency" in each
    lines = [md_paragraph("Value of each mitigation: every risk as assessed against the same "
                          "register with only one risk mitigated, on the same worlds "
                          "(reduction = pre - mitigated; claims only beyond Monte Carlo "
                          "noise)" + (", worth it only where the mitigation, its own cost "
                                      "included, lowers the mean total cost beyond noise"
                                      if costs else "") + "."), ""]
    for sentence in each_risk_sentences(each, s.get("ranking")):
        lines += [md_paragraph(sentence), ""]
    headers = ["risk mitigated", "strategy", *each_risk_headers(costs)]
    lines += ["| " + " | ".join(headers) + " |",
              "|---|---|" + "---:|" * (len(headers) - 2)]
    for risk, value in each["risks"].items():
        for name in [n for n in s.get("ranking", []) if n in value["strategies"]]:
            cells = [md_text(c) for c in risk_value_cells(
                value["strategies"][name], each.get("currency"))]
            lines.append(f"| {md_text(risk)} | {md_text(name)} | " + " | ".join(cells) + " |")
    return [*lines, ""]


_TOP_INPUTS = 12        # changed inputs named in summary.md; diff.md names every one
_TOP_CHANGES = 10


def _input_lines(diff: "NightDiff") -> list[str]:
    """The scenario inputs that changed, named (key, old -> new), at most _TOP_INPUTS."""
    from .nightly.diff import input_change_line

    if diff.same_file:
        return [f"Scenario file unchanged since {md_code(diff.previous)} (same sha256)."]
    if not diff.input_changes:
        return [f"Scenario file changed since {md_code(diff.previous)} in comments or layout "
                "only."]
    n = len(diff.input_changes)
    shown = diff.input_changes[:_TOP_INPUTS]
    lines = [f"{n} scenario input{'s' if n != 1 else ''} changed since "
             f"{md_code(diff.previous)}:", ""]
    lines += [f"- {input_change_line(c)}" for c in shown]
    if n > len(shown):
        lines.append(f"- and {n - len(shown)} more (diff.md lists every one)")
    return lines


def alerts_markdown(alerts, diff: "NightDiff | None") -> list[str]:
    """The nightly block at the top of summary.md: breaches (condition, strategy, value),
    notes on conditions, and the changed inputs, named."""
    lines = []
    if alerts.breaches:
        n = len(alerts.breaches)
        lines += [f"**{n} --fail-if breach{'es' if n != 1 else ''}** (the nightly exits 3):", ""]
        for b in alerts.breaches:
            c = b.condition
            lines.append(f"- {md_code(c.text)}: **{md_text(b.strategy)}** "
                         f"{c.metric if c.metric in METRICS else md_text(c.metric)} "
                         f"{c.stat.upper()}{' change' if c.delta else ''} = "
                         f"{b.shown or f'{b.value:,.6g}'} {md_text(c.op)} {c.threshold_text()}"
                         + (f": {md_text(b.words)}" if b.words else "")
                         + (f" ({md_text(b.detail)})" if b.detail else ""))
    elif alerts.conditions:
        lines.append(f"No --fail-if condition breached ({len(alerts.conditions)} checked: "
                     + ", ".join(md_code(c.text) for c in alerts.conditions) + ").")
    else:
        lines.append("No --fail-if conditions were set.")
    lines += [f"- Note: {md_text(note)}" for note in alerts.notes]
    if diff is not None:
        lines += ["", *_input_lines(diff)]
        if diff.status_change:
            lines += ["", md_text(diff.status_change)]
        if diff.run_changes:
            from .nightly.diff import input_change_line

            lines += ["", "Run settings changed: " + "; ".join(
                input_change_line(c) for c in diff.run_changes) + "."]
    return [*lines, ""]


def diff_summary_markdown(diff: "NightDiff") -> list[str]:
    """The night-over-night lines: the changes reported (beyond noise and material), largest
    first, at most _TOP_CHANGES (diff.md has all)."""
    from .nightly.diff import change_line

    reported = diff.reported
    n = len(reported)
    lines = [f"Night over night vs {md_code(diff.previous)}: {n} change{'s' if n != 1 else ''} "
             "beyond Monte Carlo noise and material" + (", largest first:" if n else
                                                        " (see diff.md).")]
    if n:
        lines.append("")
    lines += [f"- {change_line(c)}" for c in reported[:_TOP_CHANGES]]
    if n > _TOP_CHANGES:
        lines.append(f"- and {n - _TOP_CHANGES} more (see diff.md)")
    return lines
