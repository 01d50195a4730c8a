"""report.html of an `mcrisk optimize` run, and the words both it and the terminal use.

A pure function of the optimize.json document (docs/optimize.md): the ranked plans against
the scenario file's written strategies on the fresh seed (each statistic with its 95%
interval, the paired difference against the best written strategy and its verdict), the
race stage by stage, the candidates rejected before simulation by reason, each plan's knobs
and its [[strategies]] block, and the provenance. The page takes report.html's style
(html.py) and pieces (html_parts, text.html_text); it has no figures, scripts or network.

A plan is called better or worse than the best written strategy only where the evaluation's
verdict says the difference is beyond noise (mcrisk.optimize.evaluate: a paired test on the
same worlds); within noise is said as such, never as a small win.
"""
from __future__ import annotations

import datetime as _dt

from .findings import fmt
from .html import _CSS as PAGE_STYLE
from .html_parts import interval_text
from .text import html_text

STATISTIC_WORDS = {"p50": "P50", "p90": "P90", "p99": "P99", "mean": "mean", "p": "P"}
OBJECTIVE_WORDS = {"minimize": "minimize", "weights": "minimize the weighted sum",
                   "pareto": "Pareto set of"}
EXTRA_STYLE = """
pre.toml { background: var(--band); padding: 8px 12px; font-size: 12.5px; overflow-x: auto; }
td.better { color: #006400; font-weight: 600; }
td.worse { color: #B00020; font-weight: 600; }
td.noise { color: var(--muted); }
tr.written td { background: #f3f6f9; }
"""


def statistic_label(statistic: str) -> str:
    """'p90:trough_depth' as 'P90 trough_depth'; 'p:power_violation' as
    'P(power_violation > 0)' (the share of scenarios where the column is above 0)."""
    kind, _, column = statistic.partition(":")
    if kind == "p":
        return f"P({column} > 0)"
    return f"{STATISTIC_WORDS.get(kind, kind)} {column}"


def statistic_value(statistic: str, value: float | None) -> str:
    """A statistic's value for a table: a share for p:, else fmt's number."""
    if value is None:
        return "n/a"
    if statistic.startswith("p:"):
        return f"{value:.1%}"
    return fmt(value)


def statistic_interval(statistic: str, ci) -> str:
    """'[low, high]' of a 95% interval in the statistic's own format, '[n/a]' without one."""
    if ci is None or None in ci:
        return "[n/a]"
    if statistic.startswith("p:"):
        return f"[{ci[0]:.1%}, {ci[1]:.1%}]"
    return interval_text({"ci": ci}, "ci")


def objective_text(document: dict) -> str:
    """The objective in words: 'minimize P90 shortfall_gpu_days', 'minimize the weighted
    sum 1 x P90 ... + 0.0001 x mean cost_total', 'Pareto set of P90 ... and mean ...'."""
    objective = document["objective"]
    kind, statistics = objective["kind"], objective["statistics"]
    if kind == "weights":
        weights = objective.get("weights", {})
        terms = " + ".join(f"{weights.get(s, 1):g} x {statistic_label(s)}" for s in statistics)
        return f"{OBJECTIVE_WORDS[kind]} {terms}"
    return f"{OBJECTIVE_WORDS.get(kind, kind)} " + " and ".join(
        statistic_label(s) for s in statistics)


def objective_statistic(document: dict) -> str:
    """The statistic whose format the objective's value takes: the one statistic a plain
    minimize names, else 'objective' (a weighted sum or a Pareto set: a plain number)."""
    objective = document["objective"]
    return objective["statistics"][0] if objective["kind"] == "minimize" else "objective"


def shown_statistics(document: dict) -> list[str]:
    """The value columns of the plans' table: the one statistic a plain minimize names,
    'objective' for a weighted sum, every objective statistic of a Pareto set."""
    objective = document["objective"]
    if objective["kind"] == "pareto":
        return list(objective["statistics"])
    return [objective_statistic(document)]


def objective_name(document: dict) -> str:
    """A short header for the objective's column: its statistic, or 'objective' for a
    weighted sum or a Pareto set."""
    objective = document["objective"]
    if objective["kind"] == "minimize":
        return statistic_label(objective["statistics"][0])
    return "objective"


def verdict_text(against: dict | None) -> str:
    """A plan against the best written strategy, in a word or two: better, worse, within
    noise (no claim either way), or n/a (no interval); '(best written)' for that strategy."""
    if against is None:
        return "(best written)"
    return against.get("verdict") or "n/a"


def constraints_text(plan: dict) -> str:
    """'all met', or the constraints not met, grouped by how: 'violated: P90 trough_depth;
    within noise: P(power_violation > 0)' (within noise: the statistic's interval holds the
    bound, as a share of 0 in every scenario does against a bound of 0)."""
    if not plan["constraints"]:
        return "none set"
    groups = []
    for verdict in ("violated", "within noise"):
        names = [statistic_label(s) for s, c in plan["constraints"].items()
                 if c["verdict"] == verdict]
        if names:
            groups.append(f"{verdict}: {', '.join(names)}")
    return "; ".join(groups) or "all met"


def no_plan_text(document: dict) -> str:
    """Why a search chose no plan: every candidate was dropped as infeasible beyond noise."""
    dropped = sum(stage.get("infeasible", 0) for stage in document["race"]["stages"])
    return (f"no plan found: every candidate was dropped, {dropped:,} of them because a "
            "constraint is violated beyond noise (the race's stages say when); loosen the "
            "constraints or widen the knobs (docs/optimize.md)")


def knobs_text(plan: dict) -> str:
    """The plan's knobs as 'knob = value; ...', with the crews (last, when no knob names
    them)."""
    knobs = plan.get("knobs") or ()
    parts = [f"{k['knob']} = {k['value']}" for k in knobs]
    if not any(k["knob"] == "crews" for k in knobs):
        parts.append(f"crews = {plan['crews']}")
    return "; ".join(parts)


def rejected_text(space: dict) -> str:
    """'none', or each reason with its count, most first (ties by reason)."""
    rejected = space.get("rejected") or {}
    if not rejected:
        return "none"
    ordered = sorted(rejected.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{count:,} {reason}" for reason, count in ordered)


def sampling_text(space: dict) -> str:
    """How the candidates came from the space: every combination, or a sample and by what."""
    if not space.get("sampled"):
        return f"every one of the {space['size']:,} combinations"
    return (f"a sample of {space.get('max_candidates', 0):,} of {space['size']:,} combinations, "
            f"by {space.get('sampler') or 'a sampler not recorded'}")


def difference_text(statistic: str, estimate: dict | None) -> str:
    """The objective's difference against the best written strategy with its interval."""
    if not estimate:
        return "-"
    return (f"{_signed(statistic, estimate.get('value'))} "
            f"{statistic_interval(statistic, estimate.get('ci'))}")


def _signed(statistic: str, value: float | None) -> str:
    text = statistic_value(statistic, value)
    return f"+{text}" if value is not None and value > 0 else text


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
    """One sentence per plan against the best written strategy; a claim only beyond noise."""
    best = document["evaluation"].get("best_written")
    evaluation = document["evaluation"]
    where = (f"paired on the same {evaluation['samples']:,} fresh scenarios (seed "
             f"{evaluation['seed']}, not used to choose the plans)")
    if not document["plans"]:
        text = no_plan_text(document)
        return f'<div class="findings"><p>{html_text(text[0].upper() + text[1:])}.</p></div>'
    if best is None:
        return ('<div class="findings"><p>The scenario writes no strategy to compare the plans '
                "with.</p></div>")
    sentences = [f"Each plan against <b>{html_text(best)}</b>, the best written strategy by "
                 f"the objective, {where}:"]
    for plan in document["plans"]:
        sentences.append(_plan_sentence(document, plan, best))
    return '<div class="findings">' + "".join(f"<p>{s}</p>" for s in sentences) + "</div>"


def _plan_sentence(document: dict, plan: dict, best: str) -> str:
    against = plan.get("against_best_written")
    name, statistic = html_text(plan["name"]), objective_statistic(document)
    label = html_text(objective_name(document))
    if against is None:
        return f"{name}: is the best written strategy itself."
    if document["objective"]["kind"] == "pareto":
        return _pareto_sentence(name, html_text(best), against.get("verdict"))
    difference = html_text(difference_text(statistic, against.get("objective")))
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


def _pareto_sentence(name: str, best: str, verdict: str | None) -> str:
    """A plan against the best written strategy on a Pareto objective: dominance beyond
    noise, a trade, or no difference the scenarios can show (names already escaped)."""
    if verdict == "better":
        return (f"{name} is <b>better</b> than {best}: no worse on any objective and better "
                "on at least one beyond noise (it dominates it).")
    if verdict == "worse":
        return f"{name} is <b>worse</b> than {best}: {best} dominates it beyond noise."
    if verdict == "n/a":
        return (f"{name} and {best} trade: each is better than the other on some objective "
                "(neither dominates).")
    return (f"{name} and {best} cannot be told apart on these scenarios: no objective "
            "differs beyond noise.")


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
    objective_stat = objective_statistic(document)
    pareto = set(document.get("pareto") or ())
    is_pareto = document["objective"]["kind"] == "pareto"
    head = ("<tr><th>rank</th><th>plan</th><th class=\"n\">crews</th>"
            + "".join(f'<th class="n">{html_text(statistic_label(s))} [95%]</th>'
                      for s in statistics)
            + (f'<th class="n">{html_text(objective_name(document))} minus '
               f"{html_text(best)} [95%]</th>" if best and not is_pareto else "")
            + ("<th>verdict</th>" if best else "")
            + "<th>constraints</th>" + ("<th>Pareto set</th>" if is_pareto else "") + "</tr>")
    rows = []
    for plan in (*document["plans"], *document["written"]):
        cells = [f"<td>{plan.get('rank', '') if not plan['written'] else 'written'}</td>",
                 f'<td class="name">{html_text(plan["name"])}</td>',
                 f'<td class="n">{plan["crews"]}</td>']
        for statistic in statistics:
            estimate = plan["statistics"].get(statistic) or {}
            cells.append(f'<td class="n">{statistic_value(statistic, estimate.get("value"))}'
                         f'<br><span class="ci">'
                         f'{statistic_interval(statistic, estimate.get("ci"))}</span></td>')
        if best:
            against = plan.get("against_best_written")
            verdict = verdict_text(against)
            css = {"better": "better", "worse": "worse"}.get(verdict, "noise")
            if not is_pareto:
                difference = difference_text(objective_stat, (against or {}).get("objective"))
                cells.append(f'<td class="n">{html_text(difference)}</td>')
            cells.append(f'<td class="{css}">{html_text(verdict)}</td>')
        cells.append(f"<td>{html_text(constraints_text(plan))}</td>")
        if is_pareto:
            cells.append(f"<td>{'yes' if plan['name'] in pareto else ''}</td>")
        css = ' class="written"' if plan["written"] else ""
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
    return f'<div class="scroll"><table class="ranking">{head}{"".join(rows)}</table></div>'


def _race_html(document: dict) -> str:
    race, seed = document["race"], document["seeds"]["race"]
    rows = "".join(
        f'<tr><td>{s["stage"]}</td><td class="n">{s["scenarios"]:,}</td>'
        f'<td class="n">{s["candidates_in"]:,}</td><td class="n">{s["candidates_out"]:,}</td>'
        f'<td class="n">{s.get("infeasible", 0):,}</td>'
        f'<td class="n">{s.get("seconds", 0):,.1f}</td></tr>' for s in race["stages"])
    keep = race.get("keep")
    rule = ("the noise-aware Pareto set and the best by each objective go on"
            if document["objective"]["kind"] == "pareto" else
            "the best " + (f"{keep:.0%} " if keep else "") + "by the objective go on, with "
            "every candidate tied with the worst kept one within noise")
    return (f"<p>Successive halving on the race seed {seed}: at each stage every surviving "
            f"candidate runs on the same scenarios 0..n-1 (common random numbers); {rule}, "
            "and a candidate whose constraint is violated beyond noise is dropped.</p>"
            '<table><tr><th>stage</th><th class="n">scenarios</th>'
            "<th class=\"n\">candidates in</th><th class=\"n\">kept</th>"
            f"<th class=\"n\">infeasible</th><th class=\"n\">seconds</th></tr>{rows}</table>")


def _space_html(document: dict) -> str:
    space = document["space"]
    return (f"<p>Candidates: {html_text(sampling_text(space))}; {space['candidates']:,} "
            f"distinct feasible candidates raced (the template "
            f"<code>{html_text(document.get('template', ''))}</code> among them).</p>"
            f"<p>Rejected before simulation: {html_text(rejected_text(space))}.</p>"
            + "<p>Constraints: " + (html_text("; ".join(
                f"{statistic_label(c['statistic'])} at most {fmt(c['max'])}"
                for c in document["constraints"] if "max" in c)) or "none") + ".</p>")


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
