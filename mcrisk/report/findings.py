"""Findings: plain-language sentences generated from the run's numbers.

Returns plain text; the HTML and Markdown writers escape it. The "why" of a strategy's loss
is read from its plan: what its drains wait for, and whether its new units go into rows that
must first be emptied and retrofitted.
"""
from __future__ import annotations

from ..model import Scenario, Strategy
from .bands import HallPower


def fmt(value: float) -> str:
    """A number for prose and tables: thousands separators, 1 decimal below 100."""
    if value is None or value != value:       # null in summary.json, or NaN
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def _overlap(a: list[float] | None, b: list[float] | None) -> bool:
    """Whether two intervals overlap; a missing one (too few scenarios) counts as
    overlapping: without it a lead cannot be called beyond noise."""
    if a is None or b is None:
        return True
    return not (a[1] < b[0] or b[1] < a[0])


def why(scenario: Scenario, strategy: Strategy) -> str:
    """What in a strategy's plan exposes it to a capacity trough."""
    triggers = [t for _, t in strategy.drains]
    reasons = []
    if any(t.on_arrival for t in triggers):
        reasons.append("it drains old capacity when shipments arrive, before the new racks "
                       "have passed burn-in on a ready fabric")
    elif any(t.day is not None and not t.on_accepted and not t.on_arrival for t in triggers):
        days = sorted({t.day for t in triggers if t.day is not None})
        reasons.append(f"it drains old capacity on a fixed date (day {fmt(days[0])}), whatever "
                       "the new racks' state")
    occupied = {u.row for u in scenario.existing}
    reused = sorted({row for _, row in strategy.placement if row in occupied})
    if reused:
        reasons.append(f"its new racks go into rows still in service ({', '.join(reused[:4])}"
                       f"{'…' if len(reused) > 4 else ''}), which must be emptied (and "
                       "retrofitted) first")
    if not reasons:
        return "its drains wait for acceptance, so its losses come from slower bring-up"
    return "; ".join(reasons)


def findings(scenario: Scenario, summary: dict, largest_job: float | None = None,
             hall_power: dict[str, list[HallPower]] | None = None) -> list[str]:
    """Paragraphs for the report's findings, best strategy first."""
    ranking = summary["ranking"]
    st = summary["strategies"]
    baseline = summary["baseline_h100_eq"]
    out = [_winner(ranking, st, baseline)]
    best = st[ranking[0]]
    for name in ranking[1:]:
        m = st[name]
        depth, days = m["trough_depth"]["p90"], m["trough_days"]["p90"]
        extra = m["shortfall_gpu_days"]["p90"] - best["shortfall_gpu_days"]["p90"]
        if depth > 0:
            out.append(f"{name} loses {fmt(depth)} H100-eq at P90 for {fmt(days)} days "
                          f"(P90 of time below baseline) and falls a further {fmt(extra)} "
                          f"H100-eq x days short of demand: {why(scenario, scenario.strategy(name))}."
                          + _driven_by(summary, name, "trough_days"))
        else:
            later = m["completion_day"]["p50"] - best["completion_day"]["p50"]
            out.append(f"{name} keeps the baseline at P90 too, but its P90 shortfall is "
                          f"{fmt(extra)} H100-eq x days larger"
                          + (f" and it completes {fmt(later)} days later at P50" if later > 0
                             else "") + ".")
    out.append(_homeless(ranking, st, largest_job))
    out.append(_power(ranking, st, hall_power))
    return [p for p in out if p]


def _driven_by(summary: dict, name: str, metric: str) -> str:
    """' Its P90 trough is driven by X, then Y.' from the run's drivers, if any."""
    drivers = summary.get("drivers", {}).get("strategies", {}).get(name, {}).get(metric, [])
    rising = [d["label"] for d in drivers if d["spearman"] > 0][:2]
    if not rising:
        return ""
    return f" Its P90 {metric.replace('_', ' ')} are driven by {', then '.join(rising)}."


def _winner(ranking: list[str], st: dict, baseline: float) -> str:
    name = ranking[0]
    m = st[name]
    depth, days = m["trough_depth"]["p90"], m["trough_days"]["p90"]
    short = m["shortfall_gpu_days"]
    if depth == 0:
        text = (f"{name} wins at P90: in 9 of 10 scenarios it never dips below the "
                f"{fmt(baseline)} H100-eq baseline, and its P90 shortfall against demand is "
                f"{fmt(short['p90'])} H100-eq x days.")
    else:
        text = (f"{name} ranks first, yet at P90 it still loses {fmt(depth)} H100-eq below the "
                f"{fmt(baseline)} H100-eq baseline for {fmt(days)} days.")
    if len(ranking) > 1:
        second = st[ranking[1]]
        key = next((k for k in ("trough_depth", "trough_days", "shortfall_gpu_days")
                    if second[k]["p90"] != m[k]["p90"]), "shortfall_gpu_days")
        label, unit = {"trough_depth": ("trough depth", "H100-eq"),
                       "trough_days": ("days below baseline", "days"),
                       "shortfall_gpu_days": ("shortfall", "H100-eq x days")}[key]
        margin = second[key]["p90"] - m[key]["p90"]
        noise = ("the P90 confidence intervals overlap, so the lead is within Monte Carlo noise "
                 "at this sample count" if _overlap(m[key]["p90_ci"], second[key]["p90_ci"])
                 else "the P90 confidence intervals do not overlap, so the lead is beyond "
                      "Monte Carlo noise")
        text += (f" The runner-up, {ranking[1]}, is {fmt(margin)} {unit} worse on P90 {label} "
                 f"({fmt(second[key]['p90'])} against {fmt(m[key]['p90'])}); {noise}.")
    return text


def _homeless(ranking: list[str], st: dict, job: float | None) -> str:
    hit = [(n, st[n]["homeless_days"]["p90"]) for n in ranking if st[n]["homeless_days"]["p90"] > 0]
    size = f" ({fmt(job)} H100-eq)" if job else ""
    if not hit:
        return f"The largest job{size} always has an island big enough at P90, under every strategy."
    parts = ", ".join(f"{fmt(d)} days under {n}" for n, d in hit)
    return f"The largest job{size} has no island big enough for it, at P90: {parts}."


def _power(ranking: list[str], st: dict, hall_power) -> str:
    over = [(n, st[n]["power_violation"]["probability"]) for n in ranking
            if st[n]["power_violation"]["probability"] > 0]
    if not over:
        return ("No strategy exceeds a hall's power cap in any simulated scenario.")
    parts = []
    for name, p in over:
        halls = ""
        if hall_power:
            worst = [f"hall {h.hall} {h.probability_over:.1%}" for h in hall_power[name]
                     if h.probability_over > 0]
            halls = f" ({', '.join(worst)})" if worst else ""
        parts.append(f"{name} {p:.1%}{halls}")
    return ("WARNING: power caps are exceeded — probability of any hall over its cap: "
            + "; ".join(parts) + ". Such a plan is not feasible as written.")
