"""The terminal's text for `mcrisk optimize`: a pure function of the optimize.json document.

What the search did (space, rejected, race stages), then one table: the plans found, ranked,
and below them the scenario file's written strategies, each with the objective's statistic
and its 95% interval on the fresh scenarios, and the paired difference against the best
written strategy with its interval and verdict. Better or worse only where the evaluation's
paired test finds the difference beyond noise; otherwise 'within noise'. User strings are
shown with invisible characters escaped.
"""
from __future__ import annotations

from ..report.optimize import (constraints_text, difference_text, knobs_text, no_plan_text,
                               objective_name, objective_text, rejected_text, sampling_text,
                               shown_statistics, statistic_interval, statistic_label,
                               statistic_value, verdict_text)
from ..report.text import visible

NAME_WIDTH = 24


def format_optimize(document: dict) -> str:
    """Everything `mcrisk optimize` prints after its run, as one string."""
    found = _knob_lines(document) or [no_plan_text(document)]
    return "\n".join([*_header(document), "", format_plans(document), "", *found])


def _header(document: dict) -> list[str]:
    space, race, evaluation = document["space"], document["race"], document["evaluation"]
    seeds = document["seeds"]
    stages = "; ".join(f"{s['scenarios']:,} scenarios {s['candidates_in']:,} -> "
                       f"{s['candidates_out']:,} ({s.get('seconds', 0):.1f} s)"
                       for s in race["stages"])
    best = evaluation.get("best_written")
    return [
        f"mcrisk {document['mcrisk_version']}  {visible(document['search'])} "
        f"(sha256 {document['search_sha256'][:12]}) on {visible(document['scenario'])} "
        f"(sha256 {document['scenario_sha256'][:12]}), backend {document['backend']}",
        f"objective: {visible(objective_text(document))}",
        f"space: {sampling_text(space)}; {space['candidates']:,} distinct feasible candidates; "
        f"rejected before simulation: {visible(rejected_text(space))}",
        f"race (seed {seeds['race']}): {stages or 'no stage'}",
        f"evaluation: {len(document['plans'])} plan(s) and {len(document['written'])} written "
        f"strateg{'y' if len(document['written']) == 1 else 'ies'} on {evaluation['samples']:,} "
        f"fresh scenarios (seed {seeds['fresh']}, not used to choose)"
        + (f"; differences are plan minus {visible(best)} (the best written), paired on the "
           "same worlds, with 95% intervals" if best else "")]


def format_plans(document: dict) -> str:
    """The table: plans (ranked) and then the written strategies. One value column per
    objective statistic (a weighted sum: the sum), then, against the best written strategy,
    the objective's difference (not for a Pareto set, whose verdict is dominance) and the
    verdict."""
    best = document["evaluation"].get("best_written")
    pareto = document["objective"]["kind"] == "pareto"
    shown = shown_statistics(document)
    header = (f"{'rank':7} {visible('plan'):{NAME_WIDTH}} {'crews':>5}  "
              + "".join(f"{_label(document, s)[:24] + ' [95%]':>30}  " for s in shown)
              + (f"{'minus ' + visible(best)[:16] + ' [95%]':>30}  " if best and not pareto
                 else "")
              + (f"{'verdict':15}" if best else "") + "constraints")
    lines = [header]
    for plan in (*document["plans"], *document["written"]):
        rank = "written" if plan["written"] else str(plan.get("rank", ""))
        cells = [f"{rank:7}", f"{visible(plan['name'])[:NAME_WIDTH]:{NAME_WIDTH}}",
                 f"{plan['crews']:>5} "]
        for statistic in shown:
            estimate = (plan["objective"] if statistic == "objective"
                        else plan["statistics"].get(statistic) or {})
            value = (f"{statistic_value(statistic, estimate.get('value'))} "
                     f"{statistic_interval(statistic, estimate.get('ci'))}")
            cells.append(f"{value:>30} ")
        against = plan.get("against_best_written")
        if best and not pareto:
            cells.append(f"{difference_text(shown[0], (against or {}).get('objective')):>30} ")
        if best:
            cells.append(f"{verdict_text(against):15}")
        cells.append(constraints_text(plan))
        lines.append(" ".join(cells))
    if pareto:
        lines.append("Pareto set (no plan or written strategy better on one objective beyond "
                     "noise and no worse on the others): "
                     + (", ".join(visible(n) for n in document["pareto"]) or "empty"))
    return "\n".join(lines)


def _label(document: dict, statistic: str) -> str:
    return objective_name(document) if statistic == "objective" else statistic_label(statistic)


def _knob_lines(document: dict) -> list[str]:
    """Each plan's knobs, one line each."""
    return [f"{visible(plan['name'])}: {visible(knobs_text(plan))}"
            for plan in document["plans"]]
