"""report.html of an `mcrisk optimize` run; its words, which the terminal shares, are in
optimize_words.

A pure function of the optimize.json document (docs/optimize.md): the ranked plans against
the scenario file's written strategies on the fresh seed (each statistic with its 95%
interval, the paired difference against the best written strategy and its verdict), the
race stage by stage, the candidates rejected before simulation by reason, each plan's knobs
and its [[strategies]] block, and the provenance. The page takes report.html's style
(page.py) and pieces (parts, text.html_text); it has no figures, scripts or network.

A plan is called better or worse than the best written strategy only where the evaluation's
verdict says the difference is beyond noise (mcrisk.optimize.evaluate: a paired test on the
same worlds); within noise is said as such, never as a small win.
"""
from __future__ import annotations

import datetime as _dt

from .optimize_words import (PARETO_MEANING, READMISSION, bound_text, constraints_text,
                             currency_of, difference_text, feasibility_lines, found_lines,
                             is_pareto, knobs_text, no_plan_text, objective_name,
                             objective_statistic, objective_text, pareto_names,
                             pareto_support_text, percent_text, rejected_text, sampling_text,
                             share_bound_lines, signed_text, statistic_interval,
                             statistic_label, statistic_value, verdict_text, yardstick_text)
from .page import PAGE_CSS as PAGE_STYLE
from ..text import html_text

EXTRA_STYLE = """
pre.toml { background: var(--band); padding: 8px 12px; font-size: 12.5px;
           white-space: pre-wrap; overflow-wrap: anywhere; }
table.ranking td.n .ci { white-space: nowrap; }    /* an interval on one line */
td.better { color: #006400; font-weight: 600; }
td.worse { color: #B00020; font-weight: 600; }
td.noise { color: var(--muted); }
tr.written td { background: #f3f6f9; }
"""



# ---- the page -----------------------------------------------------------------------------


def render_optimize_report(document: dict) -> str:
    """report.html of an optimize run, as a string, from its optimize.json document."""
    title = f"mcrisk optimize: {document.get('scenario_name') or document['scenario']}"
    evaluation = document["evaluation"]
    body = [f"<h1>{html_text(title)}</h1>",
            f'<p class="sub">search <code>{html_text(document["search"])}</code> · '
            f"{html_text(objective_text(document))} · "
            f"{evaluation['samples']:,} fresh scenarios (seed {evaluation['seed']}) · "
            f"backend {html_text(document['backend'])} · "
            f"{html_text(document.get('created_utc', ''))}</p>",
            "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in (
                ("plans", "Plans"), ("race", "Race"), ("space", "Space"),
                ("knobs", "Plans as strategies"), ("provenance", "Provenance"))) + "</nav>",
            '<h2 id="plans">The plans found against the written strategies</h2>',
            _findings_html(document),
            _plans_table(document),
            _set_aside_html(document),
            '<h2 id="race">The race</h2>', _race_html(document),
            '<h2 id="space">The search space</h2>', _space_html(document),
            '<h2 id="knobs">Plans as strategies</h2>', _knobs_html(document),
            '<h2 id="provenance">Provenance</h2>', _provenance_html(document),
            f'<p class="sub">Generated {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M UTC} by '
            f"mcrisk {html_text(document['mcrisk_version'])}.</p>"]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html_text(title)}</title><style>{PAGE_STYLE}{EXTRA_STYLE}</style></head>"
            f"<body><main>{''.join(body)}</main></body></html>\n")


def _findings_html(document: dict) -> str:
    """One sentence per plan against the best written strategy (a claim only beyond noise),
    then what a share bounded by 0 found."""
    best = document["evaluation"].get("best_written")
    evaluation = document["evaluation"]
    where = (f"paired on the same {evaluation['samples']:,} fresh scenarios (seed "
             f"{evaluation['seed']}, not used to choose the plans)")
    outcome = [html_text(line) for line in found_lines(document)]
    if not document["plans"]:
        text = no_plan_text(document)
        return ('<div class="findings">' + "".join(
            f"<p>{s}</p>" for s in [html_text(text[0].upper() + text[1:]) + ".", *outcome])
            + "</div>")
    if best is None:
        return ('<div class="findings"><p>The scenario writes no strategy to compare the plans '
                "with.</p></div>")
    sentences = [f"Each plan against <b>{html_text(best)}</b>, "
                 f"{html_text(yardstick_text(document))}, {where}:"]
    for plan in document["plans"]:
        sentences.append(_plan_sentence(document, plan, best))
    if is_pareto(document):
        names = ", ".join(html_text(n) for n in pareto_names(document)) or "empty"
        sentences.append(f"The Pareto set on the fresh scenarios: {names}: "
                         f"{html_text(PARETO_MEANING)}. "
                         f"{html_text(pareto_support_text(document))}")
    sentences += [html_text(line) for line in share_bound_lines(document)
                  + feasibility_lines(document)]
    sentences += outcome
    return '<div class="findings">' + "".join(f"<p>{s}</p>" for s in sentences) + "</div>"


def _set_aside_html(document: dict) -> str:
    """The plans set aside (they broke a constraint on the fresh scenarios), with their
    figures, below the plans found: never ranked, compared or written as a block."""
    aside = document.get("set_aside") or []
    if not aside:
        return ""
    statistics = _statistics(document)
    currency = currency_of(document)
    head = ("<tr><th>plan</th><th class=\"n\">crews</th>"
            + "".join(f'<th class="n">{html_text(statistic_label(s))}<br>[95%]</th>'
                      for s in statistics) + "<th>constraints</th></tr>")
    rows = []
    for plan in aside:
        cells = [f'<td class="name">{html_text(plan["name"])}</td>',
                 f'<td class="n">{plan["crews"]}</td>']
        for statistic in statistics:
            estimate = plan["statistics"].get(statistic) or {}
            value = statistic_value(statistic, estimate.get("value"), currency)
            ci = statistic_interval(statistic, estimate.get("ci"), currency)
            cells.append(f'<td class="n">{value}<br><span class="ci">{ci}</span></td>')
        cells.append(f"<td>{html_text(constraints_text(plan))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return ("<h3>Set aside: chosen by the race, broke a constraint on the fresh scenarios</h3>"
            f'<div class="scroll"><table class="ranking">{head}{"".join(rows)}</table></div>')



def _plan_sentence(document: dict, plan: dict, best: str) -> str:
    against = plan.get("against_best_written")
    name, statistic = html_text(plan["name"]), objective_statistic(document)
    label = html_text(objective_name(document))
    if against is None:
        return f"{name}: is the best written strategy itself."
    if is_pareto(document):
        return _pareto_sentence(document, plan, best)
    difference = html_text(difference_text(statistic, against.get("objective"),
                                           currency_of(document)))
    verdict = against.get("verdict")
    if verdict in ("better", "worse"):
        ci = (against.get("objective") or {}).get("ci")
        wider = ("; the paired test on the same worlds finds the difference beyond noise, "
                 "which this interval, from the two statistics' own intervals, is too wide "
                 "to show" if ci and None not in ci and ci[0] <= 0 <= ci[1] else "")
        return (f"{name} is <b>{verdict}</b> than {html_text(best)} on {label}: "
                f"difference {difference} (plan minus {html_text(best)}, 95% interval{wider}).")
    if verdict == "within noise":
        return (f"{name} and {html_text(best)} cannot be told apart on {label} on these "
                f"scenarios: difference {difference}, an interval that holds 0.")
    return f"{name}: no interval for the difference on {label} ({difference})."


def pareto_differences(document: dict, plan: dict, best: str) -> str:
    """Each objective of a Pareto search, plan minus the best written strategy: 'P90
    shortfall (H100-eq x days) -35,375; mean total cost +$21.7k [$5.1k, $38.3k]' (a mean's
    with the paired interval of its per-world differences)."""
    other = next((w for w in document["written"] if w["name"] == best), None)
    if other is None:
        return ""
    currency = currency_of(document)
    columns = (plan.get("against_best_written") or {}).get("columns") or {}
    parts = []
    for statistic in document["objective"]["statistics"]:
        mine = (plan["statistics"].get(statistic) or {}).get("value")
        theirs = (other["statistics"].get(statistic) or {}).get("value")
        if mine is None or theirs is None:
            parts.append(f"{statistic_label(statistic)} n/a")
            continue
        text = f"{statistic_label(statistic)} {signed_text(statistic, mine - theirs, currency)}"
        paired = columns.get(statistic.partition(":")[2]) or {}
        if statistic.startswith("mean:") and paired.get("mean_ci"):
            text += " " + statistic_interval(statistic, paired["mean_ci"], currency)
        parts.append(text)
    return "; ".join(parts)


def _pareto_sentence(document: dict, plan: dict, best: str) -> str:
    """A plan against the best written strategy on a Pareto objective: dominance beyond
    noise, a trade, or no difference the scenarios can show, with each objective's
    difference."""
    name, other = html_text(plan["name"]), html_text(best)
    verdict = (plan.get("against_best_written") or {}).get("verdict")
    numbers = html_text(pareto_differences(document, plan, best))
    numbers = f" ({numbers}; plan minus {other})" if numbers else ""
    if verdict == "better":
        return (f"{name} is <b>better</b> than {other}: no worse on any objective and better "
                f"on at least one beyond noise (it dominates it){numbers}.")
    if verdict == "worse":
        return f"{name} is <b>worse</b> than {other}: {other} dominates it beyond noise{numbers}."
    if verdict == "n/a":
        return (f"{name} and {other} trade: each is lower on some objective, and neither "
                f"dominates the other beyond noise{numbers}.")
    return (f"{name} and {other} cannot be told apart on these scenarios: no objective "
            f"differs beyond noise{numbers}.")


def _statistics(document: dict) -> list[str]:
    """The statistics shown per plan: the objective's, then the constraints' not already
    shown, in the file's order."""
    shown = list(document["objective"]["statistics"])
    for constraint in document["constraints"]:
        if constraint["statistic"] not in shown:
            shown.append(constraint["statistic"])
    return shown


def _plans_table(document: dict) -> str:
    statistics = _statistics(document)
    best = document["evaluation"].get("best_written")
    samples = document["evaluation"]["samples"]
    currency = currency_of(document)
    objective_stat = objective_statistic(document)
    pareto = set(document.get("pareto") or ())
    pareto_goal = is_pareto(document)
    head = (f"<tr><th>{'#' if pareto_goal else 'rank'}</th><th>plan</th>"
            '<th class="n">crews</th>'
            + "".join(f'<th class="n">{html_text(statistic_label(s))}<br>[95%]</th>'
                      for s in statistics)
            + (f'<th class="n">{html_text(objective_name(document))}: plan minus '
               f"{html_text(best)}<br>[95%]</th>" if best and not pareto_goal else "")
            + (f"<th>against {html_text(best)}</th>" if best else "")
            + "<th>constraints</th>" + ("<th>Pareto set</th>" if pareto_goal else "") + "</tr>")
    rows = []
    for plan in (*document["plans"], *document["written"]):
        cells = [f"<td>{plan.get('rank', '') if not plan['written'] else 'written'}</td>",
                 f'<td class="name">{html_text(plan["name"])}</td>',
                 f'<td class="n">{plan["crews"]}</td>']
        for statistic in statistics:
            estimate = plan["statistics"].get(statistic) or {}
            value = estimate.get("value")
            if statistic.startswith("p:") and value == 0:
                below = f"in {samples:,} scenarios"
            else:
                below = statistic_interval(statistic, estimate.get("ci"), currency)
            cells.append(f'<td class="n">{html_text(statistic_value(statistic, value, currency))}'
                         f'<br><span class="ci">{html_text(below)}</span></td>')
        if best:
            against = plan.get("against_best_written")
            verdict = verdict_text(against, pareto_goal)
            css = {"better": "better", "worse": "worse"}.get(verdict, "noise")
            if not pareto_goal:
                difference = difference_text(objective_stat, (against or {}).get("objective"),
                                             currency)
                cells.append(f'<td class="n">{html_text(difference)}</td>')
            cells.append(f'<td class="{css}">{html_text(verdict)}</td>')
        cells.append(f"<td>{html_text(constraints_text(plan))}</td>")
        if pareto_goal:
            share = (document.get("pareto_support") or {}).get(plan["name"])
            member = "yes" if plan["name"] in pareto else ("" if share is None else "no")
            sure = "" if share is None else f" ({percent_text(share) if share else '0%'})"
            cells.append(f"<td>{member}{sure}</td>")
        css = ' class="written"' if plan["written"] else ""
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table class="ranking">{head}{"".join(rows)}</table></div>'


def race_rule(document: dict) -> str:
    """What a race stage keeps, in words."""
    if is_pareto(document):
        return ("of the rest, the noise-aware Pareto set and the best by each objective go "
                "on")
    keep = document["race"].get("keep")
    return ("of the rest, the best " + (f"{keep:.0%} " if keep else "") + "by the objective "
            "go on, with every candidate tied with the worst kept one within noise; after the "
            f"last stage every one left is ranked and the best "
            f"{document['evaluation'].get('top', '')} evaluated")


def _race_html(document: dict) -> str:
    race, seed = document["race"], document["seeds"]["race"]
    rows = "".join(
        f'<tr><td>{s["stage"]}</td><td class="n">{s["scenarios"]:,}</td>'
        f'<td class="n">{s["candidates_in"]:,}</td>'
        f'<td class="n">{s.get("readmitted", 0):,}</td>'
        f'<td class="n">{s.get("infeasible", 0):,}</td><td class="n">{s["candidates_out"]:,}</td>'
        f'<td class="n">{s.get("seconds", 0):,.1f}</td></tr>' for s in race["stages"])
    return (f"<p>Successive halving on the race seed {seed}: at each stage every surviving "
            f"candidate runs on the same scenarios 0..n-1 (common random numbers); the "
            f"candidates that break a constraint beyond noise are dropped, and "
            f"{html_text(race_rule(document))}. Dropping on the objective is provisional: "
            f"{html_text(READMISSION)}.</p>"
            '<table><tr><th>stage</th><th class="n">scenarios</th>'
            "<th class=\"n\">candidates in</th><th class=\"n\">re-admitted</th>"
            "<th class=\"n\">broke a constraint</th>"
            f"<th class=\"n\">kept</th><th class=\"n\">seconds</th></tr>{rows}</table>")


def _space_html(document: dict) -> str:
    space = document["space"]
    currency = currency_of(document)
    return (f"<p>Candidates: {html_text(sampling_text(space))}; {space['candidates']:,} "
            f"distinct candidates raced (the template "
            f"<code>{html_text(document.get('template', ''))}</code> among them).</p>"
            f"<p>Rejected before simulation: {html_text(rejected_text(space))}.</p>"
            + "<p>Constraints: " + (html_text("; ".join(
                bound_text(c, currency) for c in document["constraints"] if "max" in c))
                or "none") + ".</p>")


def _knobs_html(document: dict) -> str:
    """Each plan's knobs and its [[strategies]] block (what strategies.toml holds)."""
    parts = ["<p>strategies.toml, beside this page, holds each plan as a "
             "<code>[[strategies]]</code> block that <code>mcrisk run</code> accepts.</p>"]
    for plan in document["plans"]:
        parts.append(f"<h3>{html_text(plan['name'])}</h3><p>{html_text(knobs_text(plan))}</p>")
        if plan.get("strategy_toml"):
            parts.append(f'<pre class="toml">{html_text_block(plan["strategy_toml"])}</pre>')
    return "".join(parts)


def html_text_block(text: str) -> str:
    """Several lines of user text for a <pre>: each line through html_text."""
    return "\n".join(html_text(line) for line in text.splitlines())


def _provenance_html(document: dict) -> str:
    seeds = document["seeds"]
    rows = (("search file", document["search"]), ("search SHA-256", document["search_sha256"]),
            ("scenario file", document["scenario"]),
            ("scenario SHA-256", document["scenario_sha256"]),
            ("race seed", str(seeds["race"])), ("fresh seed", str(seeds["fresh"])),
            ("backend", f"{document['backend']} ({document.get('backend_reason', '')})"),
            ("generator", document["rng"]), ("mcrisk", document["mcrisk_version"]),
            ("wall time", f"{document.get('wall_seconds', 0):,.1f} s"))
    return "<table>" + "".join(f"<tr><th>{k}</th><td><code>{html_text(v)}</code></td></tr>"
                               for k, v in rows) + "</table>"
