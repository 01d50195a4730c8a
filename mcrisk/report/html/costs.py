"""report.html's cost section (issue 13): what each strategy costs beside its trough, and the
Pareto frontier of trough against cost, with the dominated strategies named.

    cost_report    a run's costs as the report reads them: the four Pareto frontiers
                   (mcrisk.results.pareto) and each strategy's 95% interval of the mean of
                   cost_total, computed once for the chart, the tables and the findings
    cost_section   the HTML: the cost table (per strategy, P90 trough depth and shortfall
                   beside the total cost's mean and P90 with their intervals), the component
                   table (mean and P90 of the total and each component), the frontier chart
                   and the Pareto table; two tables rather than one so that every column
                   fits the page (tests/report/test_browser.py checks at 1,400 and 1,000 px)

A run without a [costs] section (result.costs is None) has no cost report and no section:
the page is what it was. Money is written by results.compare.money_text ($1.23M) in the
scenario's currency (summary.json's costs.currency, a label).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...results.compare import mean_ci, money_text
from ...results.pareto import COST_AXES, RISK_AXES, Frontier, frontier_of, pareto_frontiers
from ...core.definitions import COST_TOTAL, COSTS
from ...core.labels import heading, label
from ..findings.sentences import fmt
from .parts import figure_html, interval_text, swatch
from ..text import html_text

# The Pareto table's axes: a risk's P90 (its label, core.labels) and a statistic of cost.
AXIS_LABELS = {**{risk: f"P90 {label(risk)}" for risk in RISK_AXES},
               "mean": "mean cost", "p90": "P90 cost"}


@dataclass(frozen=True)
class CostReport:
    """What the cost section, its chart and the cost findings share, computed once: the
    currency label, the window's end (the horizon), the four frontiers (RISK_AXES x
    COST_AXES), each strategy's 95% interval of its mean cost_total (None: too few
    scenarios) and the strategies in ranking order (the order every list of names is said in)."""
    currency: str
    horizon: float
    frontiers: list[Frontier]
    mean_cost_ci: dict[str, tuple[float, float] | None]
    ranking: tuple[str, ...] = ()
    start: float = 0.0          # the window's start: 0, or a status's as_of

    def frontier(self, risk: str = "trough_depth", cost: str = "mean") -> Frontier:
        return frontier_of(self.frontiers, risk, cost)

    def money(self, value: float | None) -> str:
        """An amount as people read it ($1.23M), plain text: html_money for the page."""
        return money_text(value, self.currency)

    def html_money(self, value: float | None) -> str:
        """An amount for the page: the currency is the user's label (a `<` in it is text)."""
        return html_text(self.money(value))

    def ranked(self, names) -> list[str]:
        """`names` in ranking order (any the ranking lacks after, as given)."""
        names = list(names)
        return ([n for n in self.ranking if n in names]
                + [n for n in names if n not in self.ranking])


def run_costs(run) -> np.ndarray | None:
    """The run's per-scenario costs [n, s, 9], None without a [costs] section."""
    return getattr(run.result, "costs", None)


def cost_report(run) -> CostReport | None:
    """The cost report of a RunResult, None when the run has no costs."""
    costs = run_costs(run)
    if costs is None:
        return None
    names = list(run.plan.strategy_names)
    block = run.summary.get("costs") or {}
    total = costs[:, :, COST_TOTAL]
    return CostReport(currency=block.get("currency", "USD"), horizon=float(run.plan.horizon),
                      frontiers=pareto_frontiers(run.result.metrics, costs, names),
                      mean_cost_ci={name: mean_ci(total[:, s]) for s, name in enumerate(names)},
                      ranking=tuple(_order(run.summary)),
                      start=float(getattr(run.plan, "window_start", 0.0)))


def _order(summary: dict) -> list[str]:
    """The strategies in ranking order (file order for any the ranking lacks)."""
    ranked = [n for n in summary.get("ranking") or [] if n in summary["strategies"]]
    return ranked + [n for n in summary["strategies"] if n not in ranked]


def shown_components(summary: dict) -> list[str]:
    """The cost columns the table shows: cost_total, then every component that is not 0 in
    every scenario of every strategy (P99 and mean both 0 for costs that are never negative)."""
    def zero(column: str) -> bool:
        return all(per["costs"][column]["mean"] == 0 and per["costs"][column]["p99"] == 0
                   for per in summary["strategies"].values())
    return [c for c in COSTS if c == "cost_total" or not zero(c)]


def _risk_cell(m: dict) -> str:
    return (f"<td class='n'><b>{fmt(m['p90'])}</b><br>"
            f"<span class='ci'>{interval_text(m)}</span></td>")


def _money_cell(report: CostReport, value, interval) -> str:
    """A cost in bold with its 95% interval under it ([n/a] where there is none)."""
    ci = ("[n/a]" if interval is None else
          f"[{report.html_money(interval[0])}, {report.html_money(interval[1])}]")
    return (f"<td class='n'><b>{report.html_money(value)}</b><br>"
            f"<span class='ci'>{ci}</span></td>")


# The page's compact style for wide tables of numbers (page.py's table.ranking: full width,
# headers that wrap, smaller type in a narrow window), so that every column stays on screen.
_WIDE = "<div class='scroll'><table class='ranking'>"


def cost_table(summary: dict, report: CostReport, colors: dict[str, str]) -> str:
    """Cost beside trough, per strategy (ranking order): P90 trough depth and shortfall, the
    mean of cost_total and its P90, each with its 95% interval."""
    head = ("<tr><th>strategy</th>"
            + "".join(f"<th class='n'>{html_text(heading(m, typeset=True))}<br>P90 [95% CI]</th>"
                      for m in RISK_AXES)
            + "<th class='n'>total cost<br>mean [95% CI]</th>"
              "<th class='n'>total cost<br>P90 [95% CI]</th></tr>")
    rows = []
    for name in _order(summary):
        per = summary["strategies"][name]
        total = per["costs"]["cost_total"]
        cells = [f"<td class='name'>{swatch(name, colors)}</td>"]
        cells += [_risk_cell(per[m]) for m in RISK_AXES]
        cells += [_money_cell(report, total["mean"], report.mean_cost_ci.get(name)),
                  _money_cell(report, total["p90"], total.get("p90_ci"))]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<p>What each strategy costs over the window [{fmt(report.start)}, "
            f"{fmt(report.horizon)}] days, in "
            f"{html_text(report.currency)}, beside its P90 trough depth and shortfall. Bold: "
            "the estimate; grey: its 95% interval (the mean's from the spread over the "
            "scenarios, each P90's distribution-free). Costs count only what happens before "
            f"day {fmt(report.horizon)}: a strategy that often completes later has its costs "
            "cut there (see the warnings under the ranking)."
            + (" What was spent before the status date is history: the status section."
               if report.start else "") + "</p>"
            + "<div class='scroll'><table class='ranking' style='width:auto'>" + head
            + "".join(rows) + "</table></div>")


def component_table(summary: dict, report: CostReport, colors: dict[str, str]) -> str:
    """What the total is made of, per strategy (ranking order): cost_total and each component
    that is ever non-zero, the mean (bold) and the P90 under it."""
    columns = shown_components(summary)
    left_out = [label(c) for c in COSTS if c not in columns]
    head = ("<tr><th>strategy</th>"
            + "".join(f"<th class='n'>{html_text(label(c))}<br>mean · P90</th>"
                      for c in columns) + "</tr>")
    rows = []
    for name in _order(summary):
        per = summary["strategies"][name]["costs"]
        cells = [f"<td class='name'>{swatch(name, colors)}</td>"]
        cells += [f"<td class='n'><b>{report.html_money(per[c]['mean'])}</b><br>"
                  f"<span class='ci'>P90 {report.html_money(per[c]['p90'])}</span></td>"
                  for c in columns]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = (f" Components that are 0 in every scenario of every strategy are left out: "
            f"{html_text(', '.join(left_out))}." if left_out else "")
    return ("<p>Each cell: the mean over the scenarios (bold) and "
            "the P90 under it. The mean of the total is the sum of the components' means; the "
            f"P90s do not add up (each is its own column's).{note}</p>"
            + _WIDE + head + "".join(rows) + "</table></div>")


def _frontier_cell(report: CostReport, f: Frontier, name: str) -> str:
    by = f.dominated_by[name]
    if not by:
        return "<td><b>frontier</b></td>"
    return f"<td>dominated by {html_text(', '.join(report.ranked(by)))}</td>"


def pareto_table(summary: dict, report: CostReport, colors: dict[str, str]) -> str:
    """Per strategy: the four estimates and, on each frontier, 'frontier' or who dominates it."""
    pairs = [(risk, cost) for risk in RISK_AXES for cost in COST_AXES]
    head = ("<tr><th>strategy</th>"
            + "".join(f"<th class='n'>{AXIS_LABELS[a]}</th>" for a in (*RISK_AXES, *COST_AXES))
            + "".join(f"<th>{AXIS_LABELS[r]} against {AXIS_LABELS[c]}</th>" for r, c in pairs)
            + "</tr>")
    rows = []
    for name in _order(summary):
        cells = [f"<td class='name'>{swatch(name, colors)}</td>"]
        cells += [f"<td class='n'>{fmt(report.frontier(risk).risk_values[name])}</td>"
                  for risk in RISK_AXES]
        cells += [f"<td class='n'>"
                  f"{report.html_money(report.frontier(cost=cost).cost_values[name])}"
                  "</td>" for cost in COST_AXES]
        cells += [_frontier_cell(report, report.frontier(r, c), name) for r, c in pairs]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<p>A strategy is <b>dominated</b> when another is no worse on both estimates "
            "(risk and cost, lower is better) and better on at least one beyond Monte Carlo "
            "noise, by a paired test on the same sampled worlds: for a mean, an interval of the "
            "mean per-world cost difference that excludes 0; for a P90, the ranking's paired "
            "test (McNemar at the pooled P90; at an atom also binomial tests of the shares "
            "at or above a threshold). Each test runs at the Bonferroni level over the four "
            "axes and every pair, so all four frontiers together name a strategy dominated on a "
            "difference that is not there with at most a 5% chance. A difference "
            "within noise never makes a strategy dominated; the <b>frontier</b> is every "
            "strategy that no other dominates.</p>" + _WIDE + head
            + "".join(rows) + "</table></div>")


def pareto_caption(report: CostReport) -> str:
    """What the frontier chart shows, and which strategies it names as dominated."""
    text = ("Each strategy's mean total cost (x) against its P90 trough depth (left) and P90 "
            "shortfall (right); the bars are the 95% intervals (of the mean; the P90's "
            "distribution-free), hidden by the point where narrower than it. Filled points "
            "(joined by a line where there are several): the frontier (no other strategy is no "
            "worse on both and better on one beyond noise); hollow points: dominated.")
    for risk in RISK_AXES:
        f = report.frontier(risk)
        if f.dominated:
            text += (f" Dominated on {AXIS_LABELS[risk]} against mean cost: "
                     + "; ".join(f"{n} (by {', '.join(report.ranked(f.dominated_by[n]))})"
                                 for n in report.ranked(f.dominated))
                     + ".")
    return text


def cost_section(run, figures, colors: dict[str, str]) -> list[str]:
    """The cost section's HTML pieces (heading, table, chart, Pareto table); empty without
    costs. `figures` carries the cost report (figures.costs) and the chart (figures['pareto'])."""
    report = getattr(figures, "costs", None)
    if report is None:
        return []
    s = run.summary
    out = ['<h2 id="costs">Cost against trough</h2>', cost_table(s, report, colors),
           "<h3>What the total is made of</h3>", component_table(s, report, colors)]
    if "pareto" in figures:
        out.append(figure_html(figures["pareto"], "Pareto frontier of trough against cost",
                               pareto_caption(report)))
    out += ["<h3>Pareto frontier: who is dominated, and by whom</h3>",
            pareto_table(s, report, colors)]
    return out
