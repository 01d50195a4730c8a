"""report.html of an `mcrisk optimize` run, and the words both it and the terminal use.

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

from ...core.definitions import COSTS, METRICS
from ...core.labels import heading, label, share_label
from ...results.compare import money_text
from ..findings.sentences import fmt
from .page import PAGE_CSS as PAGE_STYLE
from .parts import interval_text
from ..text import html_text

STATISTIC_WORDS = {"p50": "P50", "p90": "P90", "p99": "P99", "mean": "mean", "p": "P"}
OBJECTIVE_WORDS = {"minimize": "minimize", "weights": "minimize the weighted sum",
                   "pareto": "Pareto set of"}
EXTRA_STYLE = """
pre.toml { background: var(--band); padding: 8px 12px; font-size: 12.5px;
           white-space: pre-wrap; overflow-wrap: anywhere; }
table.ranking td.n .ci { white-space: nowrap; }    /* an interval on one line */
td.better { color: #006400; font-weight: 600; }
td.worse { color: #B00020; font-weight: 600; }
td.noise { color: var(--muted); }
tr.written td { background: #f3f6f9; }
"""


def column_words(column: str) -> str:
    """A metric or cost column in words (core.labels' heading, plain text, for the terminal
    too): 'shortfall (H100-eq x days)', 'total cost', 'retrofit crews cost'."""
    if column in COSTS:
        return f"{label(column)} cost"
    return heading(column) if column in METRICS else column


def statistic_label(statistic: str) -> str:
    """'p90:shortfall_gpu_days' as 'P90 shortfall (H100-eq x days)', 'mean:cost_total' as
    'mean total cost'; 'p:power_violation' as 'P(power over cap)' and another share as
    'P(trough depth (H100-eq) > 0)': the share of scenarios where the column is above 0."""
    kind, _, column = statistic.partition(":")
    if kind == "p":
        return (share_label(column) if column == "power_violation"
                else f"P({column_words(column)} > 0)")
    return f"{STATISTIC_WORDS.get(kind, kind)} {column_words(column)}"


def is_money(statistic: str) -> bool:
    """Whether a statistic is an amount of money (a cost column's, not a share)."""
    kind, _, column = statistic.partition(":")
    return kind != "p" and column in COSTS


def statistic_value(statistic: str, value: float | None, currency: str = "USD") -> str:
    """A statistic's value for a table: money for a cost ($22.8M), a share for p: ('none'
    at 0, else a percentage to two significant digits), else fmt's number."""
    if value is None:
        return "n/a"
    if statistic.startswith("p:"):
        return "none" if value == 0 else f"{100 * value:.2g}%"
    if is_money(statistic):
        return money_text(value, currency)
    return fmt(value)


def statistic_interval(statistic: str, ci, currency: str = "USD") -> str:
    """'[low, high]' of a 95% interval in the statistic's own format, '[n/a]' without one."""
    if ci is None or None in ci:
        return "[n/a]"
    if statistic.startswith("p:"):
        return "[" + ", ".join("0%" if end == 0 else f"{100 * end:.2g}%" for end in ci) + "]"
    if is_money(statistic):
        return f"[{money_text(ci[0], currency)}, {money_text(ci[1], currency)}]"
    return interval_text({"ci": ci}, "ci")


def estimate_text(statistic: str, estimate: dict | None, currency: str = "USD",
                  samples: int | None = None) -> str:
    """A statistic's value and 95% interval, '14,523 [13,731, 15,454]', '$22.8M [$22.7M,
    $22.9M]'; a share of 0 as 'none in 20,000 scenarios' (with `samples`): no interval of
    a share of 0 says more than the count does."""
    estimate = estimate or {}
    value = estimate.get("value")
    if statistic.startswith("p:") and value == 0 and samples:
        return f"none in {samples:,} scenarios"
    return (f"{statistic_value(statistic, value, currency)} "
            f"{statistic_interval(statistic, estimate.get('ci'), currency)}")


def currency_of(document: dict) -> str:
    """The scenario's currency (optimize.json's `currency`; USD when it has none)."""
    return document.get("currency") or "USD"


def bound_text(constraint: dict, currency: str = "USD") -> str:
    """A constraint in words: 'P90 completion day at most 540', 'mean total cost at most
    $40.0M', and a share bounded by 0 as 'power over cap in no scenario'."""
    statistic, maximum = constraint["statistic"], constraint["max"]
    kind, _, column = statistic.partition(":")
    if kind == "p" and maximum == 0:
        return f"{column_words(column)} in no scenario"
    return f"{statistic_label(statistic)} at most {statistic_value(statistic, maximum, currency)}"


def objective_text(document: dict) -> str:
    """The objective in words: 'minimize P90 shortfall (H100-eq x days)', 'minimize the
    weighted sum 1 x P90 ... + 0.0001 x mean total cost', 'Pareto set of P90 ... and mean
    ...'."""
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
    """A short header for the objective's column: its statistic, 'weighted sum' for a
    weighted sum, 'objective' for a Pareto set."""
    objective = document["objective"]
    if objective["kind"] == "minimize":
        return statistic_label(objective["statistics"][0])
    return "weighted sum" if objective["kind"] == "weights" else "objective"


def verdict_text(against: dict | None, pareto: bool = False) -> str:
    """A plan against the best written strategy, in a word or two: better, worse, within
    noise (no claim either way), or n/a (no interval); '(best written)' for that strategy.
    On a Pareto objective optimize.json's 'n/a' is a trade (each lower on some objective,
    neither dominating) and is said so, as the findings say it."""
    if against is None:
        return "(best written)"
    verdict = against.get("verdict") or "n/a"
    return "trade" if pareto and verdict == "n/a" else verdict


def is_pareto(document: dict) -> bool:
    return document["objective"]["kind"] == "pareto"


PARETO_MEANING = ("no other plan or written strategy is lower on one objective beyond noise "
                  "and no higher on the others; choosing among them is choosing a price "
                  "between the objectives")


def constraints_text(plan: dict) -> str:
    """'all met', or the constraints not met, grouped by how: 'violated: P90 trough depth
    (H100-eq); within noise: P90 completion day' (within noise: the statistic's interval
    holds the bound)."""
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


def difference_text(statistic: str, estimate: dict | None, currency: str = "USD") -> str:
    """The objective's difference against the best written strategy with its interval, in
    the statistic's format ('-$412k [-$480k, -$344k]', '+60,141 [57,175, 62,984]')."""
    if not estimate:
        return "-"
    return (f"{_signed(statistic, estimate.get('value'), currency)} "
            f"{statistic_interval(statistic, estimate.get('ci'), currency)}")


def _signed(statistic: str, value: float | None, currency: str) -> str:
    if statistic.startswith("p:") and value is not None:
        text = "0%" if value == 0 else f"{100 * value:.2g}%"       # a difference: no 'none'
    else:
        text = statistic_value(statistic, value, currency)
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
    """One sentence per plan against the best written strategy (a claim only beyond noise),
    then what a share bounded by 0 found."""
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
    sentences = [f"Each plan against <b>{html_text(best)}</b>, "
                 f"{html_text(yardstick_text(document))}, {where}:"]
    for plan in document["plans"]:
        sentences.append(_plan_sentence(document, plan, best))
    if is_pareto(document):
        names = ", ".join(html_text(n) for n in pareto_names(document)) or "empty"
        sentences.append(f"The Pareto set on the fresh scenarios: {names}: "
                         f"{html_text(PARETO_MEANING)}.")
    sentences += [html_text(line) for line in share_bound_lines(document)]
    return '<div class="findings">' + "".join(f"<p>{s}</p>" for s in sentences) + "</div>"


def pareto_names(document: dict) -> list[str]:
    """The Pareto set's names in the order the table lists them (plans, then written)."""
    listed = [e["name"] for e in (*document["plans"], *document["written"])]
    members = document.get("pareto") or ()
    return sorted(members, key=lambda n: (listed.index(n) if n in listed else len(listed), n))


def yardstick_text(document: dict) -> str:
    """What the best written strategy is the best of: by the objective (a Pareto search: by
    the sum of its objectives) among the written strategies that break no constraint beyond
    noise, or among them all when every one breaks one (mcrisk.optimize.evaluate)."""
    best = document["evaluation"].get("best_written")
    entry = next((w for w in document["written"] if w["name"] == best), None)
    by = "the sum of the objectives" if is_pareto(document) else "the objective"
    if entry is not None and not entry.get("feasible", True):
        return (f"the best written strategy by {by}, though it breaks a constraint: every "
                "written strategy does")
    return (f"the best written strategy by {by} among those that break no constraint beyond "
            "noise")


def share_bound_lines(document: dict) -> list[str]:
    """Per constraint that bounds a share by 0 ('in no scenario'), what the fresh scenarios
    show: 'Power over cap: none in 20,000 fresh scenarios, for every plan and written
    strategy.', or which had it and in what share of the scenarios."""
    samples = document["evaluation"]["samples"]
    entries = (*document["plans"], *document["written"])
    lines = []
    for constraint in document["constraints"]:
        kind, _, column = constraint["statistic"].partition(":")
        if kind != "p" or constraint["max"] != 0 or not entries:
            continue
        label = constraint["statistic"]
        values = [(e["name"], (e["statistics"].get(label) or {}).get("value")) for e in entries]
        if any(value is None for _, value in values):
            continue                                  # no figure: nothing to say
        had = [(name, value) for name, value in values if value > 0]
        words = column_words(column)
        if not had:
            lines.append(f"{words[0].upper()}{words[1:]}: none in {samples:,} fresh "
                         "scenarios, for every plan and written strategy.")
            continue
        clean = [e["name"] for e in entries if e["name"] not in dict(had)]
        lines.append(f"{words[0].upper()}{words[1:]}: "
                     + (f"none in {samples:,} fresh scenarios for {', '.join(clean)}; "
                        if clean else "")
                     + "; ".join(f"{name} has it in {statistic_value(label, value)} of them"
                                 for name, value in had)
                     + " (the constraint: none).")
    return lines


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
        text = f"{statistic_label(statistic)} {_signed(statistic, mine - theirs, currency)}"
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
            cells.append(f"<td>{'yes' if plan['name'] in pareto else ''}</td>")
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
        f'<td class="n">{s.get("infeasible", 0):,}</td><td class="n">{s["candidates_out"]:,}</td>'
        f'<td class="n">{s.get("seconds", 0):,.1f}</td></tr>' for s in race["stages"])
    return (f"<p>Successive halving on the race seed {seed}: at each stage every surviving "
            f"candidate runs on the same scenarios 0..n-1 (common random numbers); the "
            f"candidates that break a constraint beyond noise are dropped, and "
            f"{html_text(race_rule(document))}.</p>"
            '<table><tr><th>stage</th><th class="n">scenarios</th>'
            "<th class=\"n\">candidates in</th><th class=\"n\">broke a constraint</th>"
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
