"""Contingent strategies on the terminal: the branches each takes, how often, the metrics
there, and the value of flexibility in sentences (summary.json's `contingent`)."""
from __future__ import annotations

from ..report.text import visible
from ..results.compare import money_text
from ..results.contingency import (
    branch_rows,
    cell_heading,
    cell_text,
    condition_text,
    flexibility_sentences,
    moment_text,
)


def format_contingent(contingent: dict, currency: str | None = None) -> str:
    """A small table per contingent strategy (branch, strategy followed, share of worlds with
    its 95% interval, P90s and the mean cost over those worlds), then the value of
    flexibility: a claim only where the 95% interval of the mean difference excludes 0."""
    money = (lambda v: money_text(v, currency)) if currency else None
    lines = [("contingent strategies: each world follows the branch its decision takes "
             "(statistics over the worlds taking it):")]
    for name, entry in contingent.items():
        d = entry["decision"]
        lines.append(f"  {visible(name)}: {moment_text(d)}, {condition_text(d)}?")
        rows = branch_rows(name, entry)
        width = max(len(visible(r["strategy"])) for r in rows)
        header = (f"    {'branch':<6} {'strategy':<{width}} {'share [95% CI]':<21}"
                  + "".join(f" {cell_heading(c, s):>18}" for c, s, _ in rows[0]["cells"]))
        lines.append(header)
        for r in rows:
            low, high = r["share_ci"]
            share = f"{r['share']:.1%} [{low:.1%}, {high:.1%}]"
            cells = "".join(f" {cell_text(c, v, money):>18}" for c, _, v in r["cells"])
            lines.append(f"    {r['branch']:<6} {visible(r['strategy']):<{width}} "
                         f"{share:<21}{cells}")
    lines.append("value of flexibility (contingent - each fixed branch, on the same worlds):")
    lines += [f"  {visible(s)}" for s in flexibility_sentences(contingent, money)]
    return "\n".join(lines)
