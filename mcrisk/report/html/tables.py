"""The result tables of report.html: the ranking (with its rule and horizon warnings), the
drivers of each P90, each strategy against the leader world by world, peak power per hall,
and the value of mitigation (of the whole register and of each risk's)."""
from __future__ import annotations

from ...results.drivers import driver_unit
from ...results.horizon import horizon_warnings
from ...results.mitigation import (each_risk_headers, each_risk_sentences, mitigation_sentences,
                                   risk_value_cells, shown_verdict)
from ...core import labels
from ...results.ranking import rank_label, rule_text
from ..findings.drivers import driver_metric, driver_reason
from ..findings.sentences import fmt
from .parts import heading_html, interval_text, parts_html, swatch
from ..text import html_text


def _heading(metric: str) -> str:
    """A metric's heading as the page sets it: 'shortfall (H100-eq × days)' (core.labels)."""
    return labels.heading(metric, typeset=True)


def _dated_cell(m: dict, key: str) -> str:
    """The completion day's percentile `key`, with its weekday and date below it when the run
    has a start_date (summary.json's completion_date)."""
    from ...results.milestones import weekday

    iso = (m.get("completion_date") or {}).get(key)
    day = fmt(m["completion_day"][key])
    return f"{day}<br><small>{weekday(iso)} {html_text(iso)}</small>" if iso else day


def ranking_table(summary: dict, colors: dict[str, str]) -> str:
    """The ranking: the rule (ties within Monte Carlo noise), the table (P50, P90 with its 95%
    interval and P99 of each ranked metric; a shared rank as '3='; the criterion that decided
    each place) and a warning box for every strategy whose completion often lies beyond the
    horizon (mcrisk.results.horizon)."""
    ranked = ("trough_depth", "trough_days", "shortfall_gpu_days")
    head = ("<tr><th class='n' rowspan='2'>rank</th><th rowspan='2'>strategy</th>"
            + "".join(f'<th class="g" colspan="3">{html_text(_heading(m))}</th>'
                      for m in ranked)
            + f'<th class="g">{html_text(_heading("homeless_days"))}</th>'
            f'<th class="g" colspan="2">{html_text(_heading("completion_day"))}</th>'
            f'<th class="n" rowspan="2">{html_text(labels.share_label("power_violation"))}</th>'
            "<th rowspan='2'>decided by</th></tr><tr>"
            + '<th class="n">P50</th><th class="n">P90 [95% CI]</th><th class="n">P99</th>' * 3
            + '<th class="n">P90 [95% CI]</th><th class="n">P50</th><th class="n">P90</th></tr>')

    def p90(m: dict) -> str:
        return (f'<td class="n"><b>{fmt(m["p90"])}</b><br>'
                f'<span class="ci">{interval_text(m)}</span></td>')

    ranks = summary.get("ranks") or {}
    rows = []
    for position, name in enumerate(summary["ranking"], start=1):
        m = summary["strategies"][name]
        entry = ranks.get(name)
        label = rank_label(entry) if entry else str(position)
        mark = ("<br><span class=\"ci\">executing</span>"
                if name == summary.get("executing") else "")
        cells = [f'<td class="n">{label}</td><td class="name">{swatch(name, colors)}{mark}</td>']
        for metric in ranked:
            cells.append(f'<td class="n">{fmt(m[metric]["p50"])}</td>{p90(m[metric])}'
                         f'<td class="n">{fmt(m[metric]["p99"])}</td>')
        cells.append(p90(m["homeless_days"]))
        cells.append("".join(f'<td class="n">{_dated_cell(m, key)}</td>' for key in ("p50", "p90")))
        p = m["power_violation"]["probability"]
        cells.append(f'<td class="n{" yes" if p > 0 else ""}">{p:.1%}</td>')
        decided = entry.get("decided_by") if entry else None
        tied = entry.get("tied_with") if entry else []
        cells.append("<td>" + (html_text(labels.label(decided)) if decided else "–")
                     + (f'<br><span class="ci">tied with {html_text(", ".join(tied))}</span>'
                        if tied else "") + "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rule = summary.get("ranking_rule")
    text = (f'<p class="rule">{html_text(rule_text(rule)) + " " if rule else ""}Bold: the P90s; '
            "grey: their distribution-free 95% confidence intervals.</p>")
    warnings = "".join(f'<div class="warn horizon"><p>WARNING: {html_text(w)}</p></div>'
                       for w in horizon_warnings(summary))
    return (f'{text}<div class="scroll"><table class="ranking">{head}{"".join(rows)}</table>'
            f"</div>{warnings}")


def _kw(value: float) -> str:
    """kW with one decimal (draws are sums like 8 x 326.4); -0.0 shown as 0.0."""
    return f"{0.0 if abs(value) < 0.05 else value:,.1f}"


def _peak_cells(h) -> str:
    """P50, P90 and highest peak draw; equal neighbours share one cell (colspan), so one
    number is not repeated as three, with a note saying which statistics it is."""
    stats = [("P50", h.peak_p50_kw), ("P90", h.peak_p90_kw), ("highest", h.peak_max_kw)]
    groups: list[list[tuple[str, float]]] = []
    for stat in stats:
        if groups and groups[-1][-1][1] == stat[1]:
            groups[-1].append(stat)
        else:
            groups.append([stat])
    cells = []
    for group in groups:
        if len(group) == 1:
            cells.append(f"<td class='n'>{_kw(group[0][1])}</td>")
            continue
        if h.peak_min_kw == h.peak_max_kw:
            note = "in every scenario"
        else:
            note = " = ".join(label for label, _ in group)
        cells.append(f"<td class='n' colspan='{len(group)}' style='text-align:center'>"
                     f"{_kw(group[0][1])} <span class='ci'>({note})</span></td>")
    return "".join(cells)


def power_table(hall_power: dict, colors: dict[str, str]) -> str:
    """Per strategy and hall: cap, peak draw (P50, P90, highest; merged where equal),
    headroom = cap - the highest peak in any scenario (kW and % of the cap), P(over cap)."""
    rows = []
    for name, halls in hall_power.items():
        for i, h in enumerate(halls):
            first = f'<td class="name" rowspan="{len(halls)}">{swatch(name, colors)}</td>' if i == 0 else ""
            flag = " yes" if h.probability_over > 0 else ""
            short = " yes" if h.headroom_kw < 0 else ""
            share = "n/a" if h.headroom_share is None else f"{h.headroom_share:.1%}"
            rows.append(f"<tr>{first}<td>{html_text(h.hall)}</td><td class='n'>{_kw(h.cap_kw)}</td>"
                        f"{_peak_cells(h)}"
                        f"<td class='n{short}'>{_kw(h.headroom_kw)}</td>"
                        f"<td class='n{short}'>{share}</td>"
                        f"<td class='n{flag}'>{h.probability_over:.2%}</td></tr>")
    return ("<div class='scroll'><table><tr><th rowspan='2'>strategy</th><th rowspan='2'>hall</th>"
            "<th class='n' rowspan='2'>cap (kW)</th>"
            "<th class='n' colspan='3' style='text-align:center'>peak draw over scenarios (kW)</th>"
            "<th class='n' colspan='2' style='text-align:center'>headroom: cap − highest peak</th>"
            "<th class='n' rowspan='2'>P(over cap)</th></tr>"
            "<tr><th class='n'>P50</th><th class='n'>P90</th><th class='n'>highest</th>"
            "<th class='n'>kW</th><th class='n'>% of cap</th></tr>"
            + "".join(rows) + "</table></div>")


def driver_shift(d: dict) -> str:
    """How far a driver sits from its mean near the P90, in its own unit (driver_unit)."""
    unit = driver_unit(d["input"])
    value = f"{d['shift']:+,.1f}" if unit == "days" else f"{d['shift']:+,.3g}"
    return f"{value} {unit}"


def drivers_table(summary: dict, colors: dict[str, str], top: int = 3) -> str:
    """Per strategy, the inputs that drive its P90 trough (trough days, else shortfall:
    findings.drivers.driver_metric), strongest |rank correlation| first, each with its shift
    in its own unit, beside the criterion that decided its rank."""
    rows = []
    ranks = summary.get("ranks") or {}
    for name in summary["ranking"]:
        per_metric = summary["drivers"]["strategies"][name]
        metric = driver_metric(per_metric)
        drivers = sorted(per_metric[metric], key=lambda d: -abs(d["spearman"]))[:top] \
            if metric else []
        cells = "".join(
            f"<td>{html_text(d['label'])}<br><span class='ci'>rank corr {d['spearman']:+.2f}; "
            f"{html_text(driver_shift(d))} vs mean near P90</span></td>" for d in drivers)
        cells += "<td></td>" * (top - len(drivers))
        label = (f"{html_text(_heading(metric))}<br><span class='ci'>"
                 f"{html_text(driver_reason(metric))}</span>" if metric else "no metric varies")
        decided = (ranks.get(name) or {}).get("decided_by")
        rank_cell = html_text(labels.label(decided)) if decided else "–"
        rows.append(f"<tr><td class='name'>{swatch(name, colors)}</td><td>{rank_cell}</td>"
                    f"<td>{label}</td>{cells}</tr>")
    head = "".join(f"<th>driver {k + 1}</th>" for k in range(top))
    return (f"<div class='scroll'><table><tr><th>strategy</th><th>rank decided by</th>"
            f"<th>drivers explain</th>{head}</tr>" + "".join(rows) + "</table></div>")


def paired_table(summary: dict, colors: dict[str, str]) -> str:
    """Each strategy against the leader, scenario by scenario (common random numbers)."""
    paired = summary["paired"]
    rows = []
    for name, per_metric in paired["strategies"].items():
        for metric in ("trough_depth", "trough_days", "shortfall_gpu_days"):
            d = per_metric[metric]
            rows.append(
                f"<tr><td class='name'>{swatch(name, colors)}</td>"
                f"<td>{html_text(_heading(metric))}</td>"
                f"<td class='n'>{fmt(d['mean'])} "
                f"<span class='ci'>{interval_text(d, 'mean_ci')}</span></td>"
                f"<td class='n'>{fmt(d['p90'])} <span class='ci'>{interval_text(d)}</span></td>"
                f"<td class='n'>{d['p_a_worse']:.1%}</td></tr>")
    return (f"<p>Each strategy minus the leader, <b>{html_text(paired['leader'])}</b>, in the same "
            "sampled worlds (positive: worse). Pairing removes the world-to-world spread that two "
            "independent runs would carry.</p><div class='scroll'><table><tr><th>strategy</th>"
            "<th>metric</th><th class='n'>mean [95% CI]</th><th class='n'>P90 [95% CI]</th>"
            "<th class='n'>P(worse)</th></tr>" + "".join(rows) + "</table></div>")



def strategies_table(strategies, colors: dict[str, str]) -> str:
    """Each strategy's plan in the scenario file's words, in the file's order, with the old
    units it keeps in service (`keep`) said after it."""
    return ("<table><tr><th>strategy</th><th>plan</th></tr>" + "".join(
        f"<tr><td class='name'>{swatch(st.name, colors)}</td>"
        f"<td>{html_text(_with_kept(st))}</td></tr>" for st in strategies) + "</table>")


def _with_kept(strategy) -> str:
    """The strategy's description, then 'Keeps SU7, SU8 in service (never drained).'; a
    contingent one's, then its decision."""
    if (d := strategy.decision) is not None:
        when = f"on day {d.day:g}" if d.on is None else f"when {d.on[0]} {d.on[1]} happens"
        return (f"{strategy.description.rstrip()} Decides {when}: {d.met} if at "
                f"least {d.at_least} of its {len(d.events)} events have happened, else "
                f"{d.unmet}.").lstrip()
    if not strategy.keep:
        return strategy.description
    units = ", ".join(strategy.keep) if len(strategy.keep) <= 3 else \
        f"{strategy.keep[0]}..{strategy.keep[-1]}"
    kept = f"Keeps {units} in service (never drained)."
    return f"{strategy.description.rstrip()} {kept}" if strategy.description else kept


_MITIGATION_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                       "completion_day")


def mitigation_section(s: dict, colors: dict[str, str]) -> list[str]:
    """The value of mitigation: the same worlds with the register pre vs post mitigation,
    per strategy and metric (summary.json's `mitigation`); nothing when there is none."""
    m = s.get("mitigation")
    if m is None:
        return []
    risks = ", ".join(html_text(r) for r in m["risks"])
    head = ['<h2 id="mitigation">Value of mitigation</h2>']
    if "strategies" not in m:
        return head + [f"<p>Risks with mitigated values: {risks}. Value of mitigation "
                       f"{html_text(m['skipped'])}.</p>"]
    intro = (f"<p>The same {m['samples']:,} sampled worlds (seed {html_text(str(m['seed']))}) "
             f"with the risks {risks} as assessed (pre) and after mitigation (post): every "
             "draw is addressed by name, so the two differ only by the risks' values. This run "
             f"is the {html_text(m['run_is'])} side; it simulated the "
             f"{html_text(m['simulated'])} side too, one more simulation of "
             f"{m['samples']:,} scenarios ({m['wall_seconds']:.2f} s). Each cell is the "
             "difference pre − post, scenario by scenario (positive: mitigation lowers the "
             "metric, which is better): bold, its mean with a 95% interval; below, the P90 "
             "of the per-scenario difference (not the difference of two P90s) with its 95% "
             "interval, and the share of scenarios in which mitigation lowers or raises the "
             "metric. Mitigation is said to help or hurt only where the interval of the mean "
             "excludes 0 and the mean is at least one unit of the metric (the nightly's "
             "materiality floor); a smaller one is marked below materiality.</p>")
    order = [n for n in s.get("ranking", []) if n in m["strategies"]]
    order += [n for n in m["strategies"] if n not in order]
    sentences = ('<div class="findings">' + "".join(
        f"<p>{html_text(t)}</p>" for t in mitigation_sentences(m, order)) + "</div>")
    metrics = [k for k in _MITIGATION_METRICS if any(k in per for per in m["strategies"].values())]
    rows = []
    for name in order:
        cells = []
        for metric in metrics:
            d = m["strategies"][name][metric]
            shown = shown_verdict(metric, d)
            verdict = ("below materiality" if shown == "immaterial"
                       else shown.replace("_", " "))
            mark = {"helps": "<b>helps</b>", "hurts": "<span class='yes'>hurts</span>"}.get(
                shown, html_text(verdict))
            cells.append(   # wraps, in a narrow table, between its parts only (class u)
                f"<td class='n'><b>{fmt(d['mean'])}</b> "
                f"<span class='ci u'>{interval_text(d, 'mean_ci')}</span> {mark}<br>"
                f"<span class='ci'><span class='u'>P90 {fmt(d['p90'])}</span> "
                f"<span class='u'>{interval_text(d)}</span><br><span class='u'>lower in "
                f"{d['p_a_worse']:.1%},</span> <span class='u'>higher in "
                f"{d['p_a_better']:.1%}</span></span></td>")
        rows.append(f"<tr><td class='name'>{swatch(name, colors)}</td>{''.join(cells)}</tr>")
    header = "".join(f"<th class='n'>{heading_html(_heading(k))}</th>" for k in metrics)
    table = (f"<div class='scroll'><table class='wrap'><tr><th>strategy</th>{header}</tr>"
             + "".join(rows) + "</table></div>")
    each = each_mitigation_section(m["each_risk"], order, colors) if "each_risk" in m else []
    return head + [intro, sentences, table] + each


def each_mitigation_section(each: dict, order: list[str], colors: dict[str, str]) -> list[str]:
    """The value of each mitigation (summary.json's `mitigation.each_risk`): a sentence per
    risk and one table, a row per risk and strategy."""
    costs = "currency" in each
    intro = ("<h3 id='each-mitigation'>Value of each mitigation</h3><p>Every risk as assessed "
             "(pre) against the same register with only one risk mitigated, on the same "
             "sampled worlds: one more simulation per risk. A reduction is pre − mitigated "
             "(positive: the mitigation lowers it); a P90 is called lower or higher, and a "
             "mean reduction helps or hurts, only beyond Monte Carlo noise (95%)"
             + (f". Money in {html_text(each['currency'])}; the mitigated side's total "
                "includes what the mitigation costs, and it is <b>worth it</b> only where "
                "the 95% interval of the mean total-cost reduction lies above 0"
                if costs else "") + ".</p>")
    sentences = ('<div class="findings">' + "".join(
        f"<p>{html_text(t)}</p>" for t in each_risk_sentences(each, order)) + "</div>")
    header = "".join(f"<th class='n'>{heading_html(h)}</th>" for h in each_risk_headers(costs))
    rows = []
    for risk, value in each["risks"].items():
        names = [n for n in order if n in value["strategies"]]
        for name in names:
            cells = "".join(f"<td class='n'>{parts_html(c)}</td>" for c in risk_value_cells(
                value["strategies"][name], each.get("currency")))
            rows.append(f"<tr><td class='name'>{html_text(risk)}</td>"
                        f"<td class='name'>{swatch(name, colors)}</td>{cells}</tr>")
    return [intro, sentences, "<div class='scroll'><table class='wrap'><tr>"
            f"<th>risk mitigated</th><th>strategy</th>{header}</tr>" + "".join(rows)
            + "</table></div>"]
