"""report.html's contingent strategies: per contingent strategy its decision, the branches
taken (share of worlds with an exact 95% interval, P90s and mean cost there) and the value
of flexibility in sentences, claimed only beyond Monte Carlo noise (summary.json's
`contingent`)."""
from __future__ import annotations

from ...results.compare import money_text
from ...results.contingency import (
    branch_rows,
    cell_heading,
    cell_text,
    condition_text,
    flexibility_sentences,
    moment_text,
)
from ..text import html_text
from .parts import swatch

DASH = "–"              # a branch no world takes


def contingent_section(s: dict, colors: dict[str, str]) -> list[str]:
    """The section, or nothing without contingent strategies."""
    contingent = s.get("contingent")
    if not contingent:
        return []
    currency = s.get("costs", {}).get("currency")
    money = (lambda v: money_text(v, currency)) if currency else None
    body = ['<h2 id="contingent">Contingent strategies</h2>',
            ("<p>A contingent strategy decides on a day, by what has happened by then, which of "
            "two written strategies to follow from then on; every world follows the branch its "
            "decision takes, and both branches are strategies of this run on the same worlds. "
            "Each row: the share of worlds taking the branch (exact 95% interval) and the "
            "metrics over those worlds.</p>")]
    for name, entry in contingent.items():
        d = entry["decision"]
        rows = branch_rows(name, entry)
        head = "".join(f"<th>{html_text(cell_heading(c, st))}</th>" for c, st, _ in rows[0]["cells"])
        cells = []
        for r in rows:
            low, high = r["share_ci"]
            cells.append(
                f"<tr><td>{html_text(r['branch'])}</td><td>{swatch(r['strategy'], colors)}</td>"
                f"<td>{r['share']:.1%} [{low:.1%}, {high:.1%}]</td>"
                + "".join(f"<td>{html_text(cell_text(c, v, money, DASH))}</td>"
                          for c, _, v in r["cells"])
                + "</tr>")
        body += [(f"<h3>{swatch(name, colors)}: {html_text(moment_text(d))}, "
                 f"{html_text(condition_text(d))}?</h3>"),
                 ("<div class='scroll'><table><tr><th>branch</th><th>strategy followed</th>"
                 f"<th>share of worlds</th>{head}</tr>{''.join(cells)}</table></div>")]
    body += ["<h3>Value of flexibility</h3>",
             '<div class="findings">' + "".join(
                 f"<p>{html_text(t)}</p>" for t in flexibility_sentences(contingent, money))
             + "</div>"]
    return body
