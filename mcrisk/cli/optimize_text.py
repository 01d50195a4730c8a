"""The terminal's text for `mcrisk optimize`: a pure function of the optimize.json document.

What the search did (space, rejected, race stages, constraints), then one table: the plans
found, ranked, and below them the scenario file's written strategies, each with the
objective's statistic and its 95% interval on the fresh scenarios (money as money, metrics
under the names the run's report gives them), and the paired difference against the best
written strategy with its interval and verdict. Better or worse only where the evaluation's
paired test finds the difference beyond noise; otherwise 'within noise'. A Pareto search
shows each objective and a verdict of dominance ('trade' when neither dominates), and says
in one line what its set means. User strings are shown with invisible characters escaped.
"""
from __future__ import annotations

from ..report.html.optimize_words import (PARETO_MEANING, bound_text, constraints_text,
                                          currency_of, difference_text, estimate_text,
                                          feasibility_lines, found_lines, is_pareto, knobs_text, no_plan_text,
                                          objective_name, objective_text, pareto_names,
                                          pareto_support_text,
                                          rejected_text,
                                          sampling_text, share_bound_lines, shown_statistics,
                                          stage_text, statistic_label, verdict_text,
                                          yardstick_text)
from ..report.text import visible

NAME_WIDTH = 24
GAP = "  "


def format_optimize(document: dict) -> str:
    """Everything `mcrisk optimize` prints after its run, as one string."""
    found = _knob_lines(document) or [no_plan_text(document)]
    outcome = [visible(line) for line in found_lines(document)]
    return "\n".join([*_header(document), "", format_plans(document), *outcome, "", *found])


def _header(document: dict) -> list[str]:
    space, race, evaluation = document["space"], document["race"], document["evaluation"]
    seeds = document["seeds"]
    stages = "; ".join(f"{stage_text(s)} ({s.get('seconds', 0):.1f} s)"
                       for s in race["stages"])
    best = evaluation.get("best_written")
    currency = currency_of(document)
    constraints = "; ".join(bound_text(c, currency) for c in document["constraints"])
    against = ""
    if best and is_pareto(document):
        against = (f"; verdicts are dominance against {visible(best)} "
                   f"({yardstick_text(document)}), paired on the same worlds")
    elif best:
        against = (f"; differences are plan minus {visible(best)} "
                   f"({yardstick_text(document)}), paired on the same worlds, with 95% "
                   "intervals")
    return [
        f"mcrisk {document['mcrisk_version']}  {visible(document['search'])} "
        f"(sha256 {document['search_sha256'][:12]}) on {visible(document['scenario'])} "
        f"(sha256 {document['scenario_sha256'][:12]}), backend {document['backend']}",
        f"objective: {visible(objective_text(document))}",
        f"constraints: {visible(constraints) or 'none'}",
        f"space: {sampling_text(space)}; {space['candidates']:,} distinct candidates raced; "
        f"rejected before simulation: {visible(rejected_text(space))}",
        f"race (seed {seeds['race']}, the same scenarios for every candidate): "
        f"{stages or 'no stage'}",
        f"evaluation: {len(document['plans'])} plan(s) and {len(document['written'])} written "
        f"strateg{'y' if len(document['written']) == 1 else 'ies'} on {evaluation['samples']:,} "
        f"fresh scenarios (seed {seeds['fresh']}, not used to choose){against}"]


def format_plans(document: dict) -> str:
    """The table: plans (ranked) and then the written strategies. One value column per
    objective statistic (a weighted sum: the sum), then, against the best written strategy,
    the objective's difference (not for a Pareto set, whose verdict is dominance) and the
    verdict; each column as wide as its widest cell."""
    best = document["evaluation"].get("best_written")
    samples = document["evaluation"]["samples"]
    currency = currency_of(document)
    pareto = is_pareto(document)
    shown = shown_statistics(document)
    header = ["#" if pareto else "rank", "plan", "crews",
              *(f"{_label(document, s)} [95%]" for s in shown)]
    if best and not pareto:
        header.append(f"plan minus {visible(best)} [95%]")
    if best:
        header.append(f"against {visible(best)}")
    header.append("constraints")
    rows = []
    for plan in (*document["plans"], *document["written"]):
        rank = "written" if plan["written"] else str(plan.get("rank", ""))
        row = [rank, visible(plan["name"])[:NAME_WIDTH], str(plan["crews"])]
        for statistic in shown:
            estimate = (plan["objective"] if statistic == "objective"
                        else plan["statistics"].get(statistic))
            row.append(estimate_text(statistic, estimate, currency, samples))
        against = plan.get("against_best_written")
        if best and not pareto:
            row.append(difference_text(shown[0], (against or {}).get("objective"), currency))
        if best:
            row.append(verdict_text(against, pareto))
        row.append(constraints_text(plan))
        rows.append(row)
    lines = _aligned([header, *rows], numeric=range(2, 3 + len(shown) + (best and not pareto
                                                                          and 1 or 0)))
    if pareto:
        lines.append("Pareto set: " + (", ".join(visible(n) for n in pareto_names(document))
                                       or "empty") + f" ({PARETO_MEANING})")
        lines += [visible(line) for line in [pareto_support_text(document)] if line]
    lines += share_bound_lines(document) + feasibility_lines(document)
    return "\n".join(lines)


def _aligned(rows: list[list[str]], numeric) -> list[str]:
    """Rows of cells as lines, each column as wide as its widest cell: the `numeric`
    columns right-aligned, the others left-aligned, the last one unpadded."""
    numeric = set(numeric)
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    last = len(widths) - 1
    return [GAP.join(cell if k == last else cell.rjust(widths[k]) if k in numeric
                     else cell.ljust(widths[k]) for k, cell in enumerate(row)).rstrip()
            for row in rows]


def _label(document: dict, statistic: str) -> str:
    return objective_name(document) if statistic == "objective" else statistic_label(statistic)


def _knob_lines(document: dict) -> list[str]:
    """Each plan's knobs, one line each."""
    return [f"{visible(plan['name'])}: {visible(knobs_text(plan))}"
            for plan in document["plans"]]
