"""summary.md: the ranking and headline numbers as Markdown, for chat and e-mail.

Every user string goes through text.md_text (inside a line, table cells), text.md_paragraph
(paragraphs) or text.md_code (paths and run ids in code spans), so that it renders literally
in any Markdown client.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .findings import fmt
from .text import md_code, md_paragraph, md_text

if TYPE_CHECKING:
    from .diff import NightDiff


def summary_markdown(summary: dict, paragraphs: list[str], diff: "NightDiff | None" = None,
                     run_label: str | None = None, notes: tuple[str, ...] = ()) -> str:
    """summary.md; `notes` are nightly remarks (a comparison that was skipped, and why)."""
    s = summary
    lines = [f"# mcrisk: {md_text(s.get('scenario_name', s['scenario']))}", "",
             f"{s['samples']:,} scenarios, seed {s['seed']}, backend {md_text(s['backend'])}, "
             f"mcrisk {md_text(s['mcrisk_version'])}, scenario {md_code(s['scenario'])} "
             f"(sha256 {md_text(s['scenario_sha256'][:12])})"
             + (f", nightly run {md_code(run_label)}" if run_label else "") + ".", "",
             "| rank | strategy | trough depth P90 (H100-eq) | trough days P90 | "
             "shortfall P90 (H100-eq x d) | homeless days P90 | completion day P50 / P90 | "
             "P(power over cap) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for position, name in enumerate(s["ranking"], start=1):
        m = s["strategies"][name]
        lines.append(
            f"| {position} | {md_text(name)} | {fmt(m['trough_depth']['p90'])} | "
            f"{fmt(m['trough_days']['p90'])} | {fmt(m['shortfall_gpu_days']['p90'])} | "
            f"{fmt(m['homeless_days']['p90'])} | {fmt(m['completion_day']['p50'])} / "
            f"{fmt(m['completion_day']['p90'])} | {m['power_violation']['probability']:.1%} |")
    lines.append("")
    for paragraph in paragraphs:
        lines += [md_paragraph(paragraph), ""]
    if diff is not None:
        n = len(diff.significant)
        lines.append(f"Night over night vs {md_code(diff.previous)}: {n} "
                     f"change{'s' if n != 1 else ''} beyond Monte Carlo noise, {len(diff.input_changes)} scenario input"
                     f"{'s' if len(diff.input_changes) != 1 else ''} changed (see diff.md).")
        for c in diff.significant[:10]:
            lines.append(f"- {md_text(c.strategy)} {c.metric} {c.stat.upper()}: {fmt(c.old)} -> "
                         f"{fmt(c.new)}")
    for note in notes:
        lines += ["", f"Note: {md_text(note)}"]
    return "\n".join(lines).rstrip() + "\n"
