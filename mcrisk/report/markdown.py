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
from ..core.labels import heading, label, share_label, unit
from ..results.ranking import rank_label, rule_text
from .findings.sentences import fmt
from .status import executing_words
from .text import md_code, md_paragraph, md_text

if TYPE_CHECKING:
    from .nightly.diff import NightDiff


SUMMARY_WIDTH = 100      # summary.md: about one screen of a chat client, lines this wide
_TOP_FINDINGS = 3        # findings paragraphs summary.md opens; report.html has every one


def summary_markdown(summary: dict, paragraphs: list[str], diff: "NightDiff | None" = None,
                     run_label: str | None = None, notes: tuple[str, ...] = (),
                     alerts=None) -> str:
    """summary.md, short enough for a chat message (about 25 lines of at most SUMMARY_WIDTH
    characters, more only for a nightly's breaches): the run in one line, the nightly's
    alerts, the executing plan and its status, the ranking at P90, the top findings (the
    opening sentences of the first _TOP_FINDINGS paragraphs), the horizon warnings in one
    line, and a pointer to report.html, which keeps everything this leaves out (the ranking
    rule, every finding, the cost, job-mix and mitigation tables, the status section, the
    changes). `notes` are nightly remarks (a comparison that was skipped, and why); `alerts`:
    the nightly's alerts.AlertOutcome, shown first."""
    s = summary
    lines = [f"# mcrisk: {md_text(s.get('scenario_name', s['scenario']))}", "",
             *_wrap(f"{s['samples']:,} scenarios, seed {s['seed']}, scenario "
                    f"{md_code(s['scenario'])} (sha256 {md_text(s['scenario_sha256'][:12])})"
                    + (f", nightly run {md_code(run_label)}" if run_label else "") + "."), ""]
    risks = s.get("risks") or {}
    if risks and (risks.get("mode", "file") != "file" or risks.get("disabled_by_cli")):
        lines += [*_wrap(md_paragraph("Risk register set on the command line: "
                                      + risk_mode_text(risks) + ".")), ""]
    if alerts is not None:
        lines += alerts_markdown(alerts, diff)
    if diff is not None:
        lines += night_lead_markdown(diff)
        n = len(diff.reported)
        lines += [*_wrap(f"Night over night vs {md_code(diff.previous)}: {n} change"
                         f"{'s' if n != 1 else ''} beyond Monte Carlo noise and material across "
                         "the strategies; the largest in report.html, every one in diff.md."),
                  ""]
    executing = executing_words(s)
    if executing:
        lines += [*_wrap(f"**{md_text(executing)}**"), ""]
    if s.get("status"):
        lines += [*_wrap(_status_brief(s["status"])), ""]
    lines += [*ranking_brief(s), ""]
    findings = [_opening(p) for p in paragraphs[:_TOP_FINDINGS]]
    for finding in findings:
        lines += _wrap(md_paragraph(finding), "- ", "  ")
    warned = horizon_brief(s)
    if warned:
        lines += _wrap(md_text(warned), "- ", "  ")
    if findings or warned:
        lines.append("")
    if notes:
        lines += [*_wrap(f"{len(notes)} note{'s' if len(notes) != 1 else ''} on the comparison "
                         "(report.html): " + md_text(notes[0])), ""]
    lines += _wrap("The long form is `report.html`, beside this file: " + _long_form(s) + ".")
    return "\n".join(lines).rstrip() + "\n"


def _wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """Markdown `text` as lines of at most SUMMARY_WIDTH characters, where that can be done
    without changing what it says: a code span is never broken (a space in it would show),
    a long word stays whole, and no continuation line starts with what would begin a block
    (a heading, a quote, a list item, a table row, HTML): such a word joins the line above."""
    import re
    import textwrap

    held = re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", lambda m: m[0].replace(" ", "\0"),
                  text)                                    # a code span: never broken
    lines = textwrap.wrap(held, SUMMARY_WIDTH, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False) or [first.rstrip()]
    block = re.compile(r"\s*(?:[#>+*=_~`|<-]|\d+[.)])")
    out = [lines[0]]
    for line in lines[1:]:
        while block.match(line) and line.strip():
            word, _, line = line.strip().partition(" ")
            out[-1] += " " + word
            line = rest + line if line else ""
        if line.strip():
            out.append(line)
    return [line.replace("\0", " ") for line in out]


def _opening(paragraph: str, at_least: int = 60) -> str:
    """A paragraph's opening sentences: the first, and the next too while they are shorter
    than `at_least` characters ('hybrid-gated ranks first.' says little alone)."""
    import re

    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Za-z0-9(])(?<!e\.g\. )(?<!i\.e\. )",
                         paragraph.strip())
    out = sentences[0]
    for sentence in sentences[1:]:
        if len(out) >= at_least:
            break
        out += " " + sentence
    return out


def _long_form(s: dict) -> str:
    """What report.html has that summary.md leaves out, in a few words."""
    parts = ["every finding", "the ranking rule and intervals"]
    if s.get("costs"):
        parts.append("costs")
    if s.get("jobs"):
        parts.append("the job mix")
    if (s.get("mitigation") or {}).get("each_risk"):
        parts.append("mitigations")
    if s.get("status"):
        parts.append("the status")
    parts += ["drivers", "schedule", "charts"]
    return ", ".join(parts)


def _status_brief(status: dict) -> str:
    from ..results.milestones import weekday

    when = f"day {fmt(status['as_of'])}"
    if status.get("as_of_date"):
        when += f" ({weekday(status['as_of_date'])} {status['as_of_date']})"
    happened = "; ".join(status.get("happened") or []) or "nothing recorded yet"
    return md_text(f"Status as of {when}: {happened}.")


def ranking_brief(s: dict) -> list[str]:
    """The ranking at P90 in a narrow table: rank, strategy, the P90 trough depth, trough
    days, shortfall and completion day, the cost P90 with costs, and the deciding criterion."""
    from ..results.compare import money_text

    ranks = s.get("ranks") or {}
    costs = s.get("costs")
    headers = [label("trough_depth"), label("trough_days"), label("shortfall_gpu_days"),
               "completion", *(["cost"] if costs else [])]
    lines = [f"Ranking, best first (P90s; {label('trough_depth')} in {unit('trough_depth')}, "
             f"{label('shortfall_gpu_days')} in {unit('shortfall_gpu_days')}"
             f"{', cost in ' + md_text(costs['currency']) if costs else ''}):", "",
             "| rank | strategy | " + " | ".join(headers) + " | decided by |",
             "|---:|---|" + "---:|" * len(headers) + "---|"]
    for position, name in enumerate(s["ranking"], start=1):
        m = s["strategies"][name]
        entry = ranks.get(name)
        decided = entry.get("decided_by") if entry else None
        cells = [*(fmt(m[k]["p90"]) for k in ("trough_depth", "trough_days",
                                              "shortfall_gpu_days")), _dated(m, "p90")]
        if costs:
            cells.append(md_text(money_text(m["costs"]["cost_total"]["p90"], costs["currency"])))
        lines.append(f"| {rank_label(entry) if entry else position} | {md_text(name)}"
                     + (" (executing)" if name == s.get("executing") else "") + " | "
                     + " | ".join(cells) + " | "
                     + (md_text(label(decided)) if decided else "-") + " |")
    return lines


def horizon_brief(s: dict) -> str:
    """The horizon warnings in one sentence: which strategies complete after the horizon in
    how many scenarios ('' when none does often)."""
    from ..results.horizon import BEYOND_HORIZON_NOTABLE

    late = [(name, s["strategies"][name]["beyond_horizon"]["probability"])
            for name in s.get("ranking") or []
            if (s["strategies"][name].get("beyond_horizon") or {}).get("probability", 0)
            > BEYOND_HORIZON_NOTABLE]
    if not late or not horizon_warnings(s):
        return ""
    return (f"Warning: completion passes the {fmt(s['horizon_days'])}-day horizon under "
            + ", ".join(f"{name} ({p:.1%})" for name, p in late)
            + " of scenarios; what happens after it is not counted (report.html says which "
              "horizon would cover each).")


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


_TOP_INPUTS = 3         # changed inputs named in summary.md; report.html 12, diff.md all
_TOP_CHANGES = 3        # changes named in summary.md; report.html and diff.md list them all
_TOP_HAPPENED = 3       # lines of what happened in summary.md; report.html and diff.md all


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
        lines.append(f"- and {n - len(shown)} more (report.html and diff.md name them)")
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
    if alerts.notes:
        lines.append(f"- {len(alerts.notes)} note{'s' if len(alerts.notes) != 1 else ''} on the "
                     f"conditions (report.html lists them), the first: {md_text(alerts.notes[0])}")
    if diff is not None:
        lines += ["", *_wrap_all(_input_lines(diff))]
        if diff.run_lines:
            lines += ["", *_wrap("Run settings changed: " + "; ".join(
                md_text(line) for line in diff.run_lines) + ".")]
    return [*lines, ""]


def _wrap_all(lines: list[str]) -> list[str]:
    """Each line wrapped at SUMMARY_WIDTH, a list item's continuation indented under it."""
    out = []
    for line in lines:
        if line.startswith("- "):
            out += _wrap(line[2:], "- ", "  ")
        else:
            out += _wrap(line) if line else [""]
    return out


def night_lead_markdown(diff: "NightDiff") -> list[str]:
    """What a planner reads first in a nightly: the executing plan's figures since last night
    (with each group's share where the attribution ran) and what happened, in words, at most
    _TOP_HAPPENED lines (report.html and diff.md have the whole night)."""
    from .nightly.change_log import HAPPENED
    from .nightly.lead import number, signed

    lines = []
    lead = diff.lead
    moves = [] if lead is None else [
        None if f.old is None or f.new is None else f.new - f.old for f in lead.figures]
    if lead is not None and all(m == 0 for m in moves):
        lines += [*_wrap(f"**The executing plan, {md_text(lead.strategy)}:** unchanged since "
                         "last night on every figure: " + md_text(", ".join(
                             f"{f.label} {number(f.new, f.unit)}" for f in lead.figures))
                         + "."), ""]
    elif lead is not None:
        lines += _wrap(f"**The executing plan, {md_text(lead.strategy)}, since last night:**")
        applied = [g for g in lead.groups if g.applied]
        for f in lead.figures:
            move = None if f.old is None or f.new is None else f.new - f.old
            text = (f"{f.label}: {number(f.old, f.unit)} → {number(f.new, f.unit)} "
                    f"({signed(move, f.unit)}; {f.verdict}")
            if f.key in lead.total and applied and move:
                parts = [f"{g.name} {signed(g.contributions.get(f.key), f.unit)}"
                         for g in applied if g.contributions.get(f.key)]
                if parts:
                    text += "; from " + ", ".join(parts)
            lines += _wrap(md_text(text + ")"), "- ", "  ")
        lines.append("")
    if diff.status_change:       # its first clause: which windows the two nights count
        lines += [*_wrap(md_text(diff.status_change.split(": ")[0].rstrip(".") + ".")), ""]
    happened = [line.text for line in diff.change_log if line.group == HAPPENED]
    others = len(diff.change_log) - len(happened)
    if happened or others:
        lines += _wrap("What happened since last night" + (":" if happened else ": nothing "
                                                           "recorded."))
        for text in happened[:_TOP_HAPPENED]:
            lines += _wrap(md_text(text), "- ", "  ")
        more = len(happened) - _TOP_HAPPENED
        if more > 0 or others:
            rest = ([f"{more} more of what happened"] if more > 0 else []) + (
                [f"{others} change{'s' if others != 1 else ''} to the plan or the model"]
                if others else [])
            lines += _wrap("- and " + " and ".join(rest) + ": report.html and diff.md", "",
                           "  ")
        lines.append("")
    return lines


def diff_summary_markdown(diff: "NightDiff") -> list[str]:
    """The night-over-night lines: the changes reported (beyond noise and material), largest
    first, at most _TOP_CHANGES (diff.md has all)."""
    from .nightly.diff_text import top_change_lines

    reported = diff.reported
    n = len(reported)
    lines = [f"Night over night vs {md_code(diff.previous)}: {n} change{'s' if n != 1 else ''} "
             "beyond Monte Carlo noise and material" + (", largest first:" if n else
                                                        " (see diff.md).")]
    if n:
        lines.append("")
    lines += [f"- {line}" for line in top_change_lines(diff, top=_TOP_CHANGES)]
    return lines
