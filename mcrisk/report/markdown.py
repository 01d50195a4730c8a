"""summary.md: the ranking and headline numbers as Markdown, for chat and e-mail."""
from __future__ import annotations

from .diff import NightDiff
from .findings import fmt


def _cell(text: str) -> str:
    """A table cell: pipes and line breaks would end the cell; HTML would render in some clients."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def summary_markdown(summary: dict, paragraphs: list[str], diff: NightDiff | None = None,
                     run_label: str | None = None) -> str:
    s = summary
    lines = [f"# mcrisk: {_cell(s.get('scenario_name', s['scenario']))}", "",
             f"{s['samples']:,} scenarios, seed {s['seed']}, backend {s['backend']}, "
             f"mcrisk {s['mcrisk_version']}, scenario `{s['scenario']}` "
             f"(sha256 {s['scenario_sha256'][:12]})"
             + (f", nightly run `{run_label}`" if run_label else "") + ".", "",
             "| rank | strategy | trough depth P90 (H100-eq) | trough days P90 | "
             "shortfall P90 (H100-eq x d) | homeless days P90 | completion day P50 / P90 | "
             "P(power over cap) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|"]
    for position, name in enumerate(s["ranking"], start=1):
        m = s["strategies"][name]
        lines.append(
            f"| {position} | {_cell(name)} | {fmt(m['trough_depth']['p90'])} | "
            f"{fmt(m['trough_days']['p90'])} | {fmt(m['shortfall_gpu_days']['p90'])} | "
            f"{fmt(m['homeless_days']['p90'])} | {fmt(m['completion_day']['p50'])} / "
            f"{fmt(m['completion_day']['p90'])} | {m['power_violation']['probability']:.1%} |")
    lines.append("")
    for paragraph in paragraphs:
        lines += [_cell(paragraph), ""]
    if diff is not None:
        n = len(diff.significant)
        lines.append(f"Night over night vs `{diff.previous}`: {n} change{'s' if n != 1 else ''} "
                     f"beyond Monte Carlo noise, {len(diff.input_changes)} scenario input"
                     f"{'s' if len(diff.input_changes) != 1 else ''} changed (see diff.md).")
        for c in diff.significant[:10]:
            lines.append(f"- {_cell(c.strategy)} {c.metric} {c.stat.upper()}: {fmt(c.old)} -> "
                         f"{fmt(c.new)}")
    return "\n".join(lines).rstrip() + "\n"
