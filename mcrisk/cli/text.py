"""The terminal's text: the tables and sentences the commands print, as pure functions of
summary.json's data (user strings shown with invisible characters escaped).
"""
from __future__ import annotations

from typing import Callable

from ..core.labels import heading, label
from ..results.statistics import p90_ci_min_samples
from ..results.compare import MEAN_CI_MIN_SAMPLES, money_text
from ..results.mitigation import mitigation_sentences

def _fmt(value: float | None) -> str:
    """A number for the terminal's tables: thousands separators, 1 decimal below 100; a value
    that rounds to zero is "0.0", never "-0.0" (a tiny negative end of an interval)."""
    if value is None or value != value:  # not computable (summary.json: null), or nan
        return "n/a"
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"
    return text[1:] if text == "-0.0" else text


NAME_WIDTH = 24      # the strategy column of the terminal's tables, wider for longer names


def name_width(names) -> int:
    """The strategy column's width: NAME_WIDTH, or the longest name shown (up to the 100
    characters a name may have): a name cut short could be another's."""
    from ..report.text import visible

    return max([NAME_WIDTH, *(len(visible(name)) for name in names)])


def format_table(summary: dict) -> str:
    """The ranked side-by-side table of the run's summary: a shared rank shows as '3=', and
    'decided by' names the criterion that separated the strategy from the one above (for the
    first, from the one below; '-' where no criterion separates any)."""
    from ..results.ranking import rank_label
    from ..report.text import visible

    w = name_width(summary["ranking"])
    header1 = (f"{'':4} {'strategy':{w}} {heading('trough_depth'):>24} "
               f"{heading('trough_days'):>22} {heading('shortfall_gpu_days'):>27} "
               f"{heading('homeless_days'):>15} {heading('completion_day'):>15} "
               f"{'power':>7}  {'decided by'}")
    header2 = (f"{'rank':4} {'':{w}} {'P50':>7} {'P90':>8} {'P99':>7}  {'P50':>6} {'P90':>7} "
               f"{'P99':>7}  {'P50':>9} {'P90':>8} {'P99':>8}  {'P50':>7} {'P90':>7} "
               f"{'P50':>7} {'P90':>7} {'P(over)':>7}")
    lines = [header1, header2]
    ranks = summary.get("ranks") or {}
    for position, name in enumerate(summary["ranking"], start=1):
        m = summary["strategies"][name]
        entry = ranks.get(name)
        decided = entry.get("decided_by") if entry else None
        cells = [f"{rank_label(entry) if entry else position:<4}", f"{visible(name):{w}}"]
        for metric, width in (("trough_depth", (7, 8, 7)), ("trough_days", (6, 7, 7)),
                              ("shortfall_gpu_days", (9, 8, 8))):
            cells.append(" ".join(f"{_fmt(m[metric][k]):>{w}}"
                                  for k, w in zip(("p50", "p90", "p99"), width)) + " ")
        cells.append(f"{_fmt(m['homeless_days']['p50']):>7} {_fmt(m['homeless_days']['p90']):>7}")
        cells.append(f"{_fmt(m['completion_day']['p50']):>7} {_fmt(m['completion_day']['p90']):>7}")
        cells.append(f"{m['power_violation']['probability']:>7.1%} ")
        cells.append(label(decided) if decided else "-")
        if name == summary.get("executing"):
            cells.append(" <- executing")
        lines.append(" ".join(cells))
        if summary.get("start_date") and m.get("completion_date"):
            lines.append(f"{'':4} {'':{w}} completion " + ", ".join(
                f"{key.upper()} {_dated(m['completion_day'][key], m['completion_date'][key])}"
                for key in ("p50", "p90")))
    return "\n".join(lines)


def _dated(day, iso) -> str:
    """A day number with its date and weekday, '305 (Thu 2027-11-04)'; the number alone
    without a date."""
    from ..results.milestones import weekday

    return f"{_fmt(day)} ({weekday(iso)} {iso})" if iso else _fmt(day)


def format_horizon_warnings(summary: dict) -> str:
    """'WARNING: ...' lines for strategies whose completion often lies beyond the horizon
    (mcrisk.results.horizon); empty when there are none."""
    from ..results.horizon import horizon_warnings
    from ..report.text import visible

    return "\n".join(f"WARNING: {visible(text)}" for text in horizon_warnings(summary))


def format_drivers(summary: dict, top: int = 3) -> str:
    """For each strategy, what drives its P90 trough (trough days; shortfall if its trough
    days do not vary: report.findings.drivers.driver_metric), each shift in its own unit."""
    from ..report.findings.drivers import driver_metric
    from ..report.html.tables import driver_shift
    from ..report.text import visible

    lines = []
    for name in summary["ranking"]:
        per_metric = summary["drivers"]["strategies"][name]
        metric = driver_metric(per_metric)
        if metric is None:
            lines.append(f"  {visible(name)}: no metric varies")
            continue
        found = sorted(per_metric[metric], key=lambda d: -abs(d["spearman"]))[:top]
        parts = [f"{visible(d['label'])} (rank corr {d['spearman']:+.2f}, "
                 f"{visible(driver_shift(d))} near P90)" for d in found]
        lines.append(f"  {visible(name)} [{label(metric)}]: " + "; ".join(parts))
    return "\n".join(lines)


def format_precision(p: dict) -> str:
    """Whether the --precision target was met, and the P90 interval farthest from it."""
    w = p["widest"]
    state = "met" if p["met"] else f"NOT met (stopped at --max-samples {p['max_samples']:,})"
    if w["half_width"] is None:
        widest = (f"{w['strategy']} {w['metric']} has no interval "
                  f"({w.get('interval_unavailable', 'not computable')})")
    else:
        widest = (f"{w['strategy']} {w['metric']} +-{w['half_width']:,.3g} of "
                  f"{w['p90']:,.6g} (allowed {w['allowed']:,.3g})")
    return (f"precision {p['relative']:.1%} (floor {p['floor']}): {state} after "
            f"{p['samples']:,} scenarios; widest P90 interval: {widest}")


def format_comparison(a: str, b: str, comparison: dict, samples: int,
                      difference: str = "A - B", worse: str = "P(A worse)",
                      better: str = "P(A better)", label: str = "metric",
                      fmt: Callable[[float | None], str] = _fmt) -> str:
    """One line per metric of the paired difference A - B over `samples` scenarios (or of
    another paired difference, named by `difference`, `worse` and `better`); a `verdict`
    column where the differences carry one (the value of mitigation). `label` names the
    rows (metric, cost) and `fmt` writes a value (money for costs)."""
    verdicts = any("verdict" in d for d in comparison.values())
    lines = [f"{f'{label} ({difference})':22} {'mean [95% CI]':>30} {'P50':>10} "
             f"{'P90 [95% CI]':>34} {worse:>11} {better:>12}"
             + ("  verdict (mean)" if verdicts else "")]
    for metric, d in comparison.items():
        mean = f"{fmt(d['mean'])} {_interval(d['mean_ci'], MEAN_CI_MIN_SAMPLES, samples, fmt)}"
        p90 = f"{fmt(d['p90'])} {_interval(d['p90_ci'], p90_ci_min_samples(), samples, fmt)}"
        lines.append(f"{metric:22} {mean:>30} {fmt(d['p50']):>10} {p90:>34} "
                     f"{d['p_a_worse']:>11.1%} {d['p_a_better']:>12.1%}"
                     + (f"  {d['verdict'].replace('_', ' ')}" if "verdict" in d else ""))
    return "\n".join(lines)


def compare_window_text(status, scenario) -> str:
    """compare's line for a status: which file, and which days every difference counts (the
    future, [as_of, horizon); completion days still count from day 0)."""
    from ..results.facts import day_text

    start = scenario.start_date
    return (f"status as of {day_text(status.as_of, start)}, from {escaped(status.path)} (sha256 "
            f"{status.sha256[:12]}): every difference below counts days {status.as_of:,g} to "
            f"{scenario.horizon_days:,g} (the horizon), what is still at risk; completion "
            "days still count from day 0")


def format_cost_comparison(a: str, b: str, differences: dict, samples: int,
                           currency: str) -> str:
    """compare's cost table: per cost column (cost_total first), the paired difference A - B
    in money (the scenario's `currency`); P(A more) is the share of worlds where A costs
    more."""
    return (f"cost: A - B per scenario in {escaped(currency)}; positive = A costs more\n"
            + format_comparison(a, b, differences, samples, label="cost",
                                worse="P(A more)", better="P(A less)",
                                fmt=lambda value: money_text(value, currency)))


def escaped(text: str) -> str:
    """User text (risk ids, strategy names) with invisible characters shown as escapes."""
    from ..report.text import visible
    return visible(text)


def _mitigation_header(m: dict) -> str:
    """What the value of mitigation is computed from, in one line."""
    return (f"value of mitigation: pre - post mitigation of {', '.join(map(escaped, m['risks']))} "
            f"on the same sampled worlds; positive = mitigation lowers the metric. This run is "
            f"the {m['run_is']} side; the {m['simulated']} side was simulated too"
            + (f" (one more simulation of {m['samples']:,} scenarios, {m['wall_seconds']:.2f} s)"
               if "samples" in m else ""))


def format_mitigation(m: dict) -> str:
    """The value of mitigation of a run, in sentences: a claim only where the 95% interval
    of the mean difference excludes 0 (summary.json and report.html have every number); then
    the value of each mitigation, a table per risk."""
    lines = [_mitigation_header(m) + ":"]
    lines += [f"  {escaped(sentence)}" for sentence in mitigation_sentences(m)]
    if "each_risk" in m:
        lines += ["", format_each_mitigation(m["each_risk"])]
    return "\n".join(lines)


_CHANGE_WORDS = {"lower": "lower", "higher": "higher", "within_noise": "within noise",
                 "unchanged": "same"}


def format_each_mitigation(each: dict) -> str:
    """The value of each mitigation (summary.json's `mitigation.each_risk`): per risk, a row
    per strategy: the P90 trough depth pre -> with the mitigation, the mean shortfall it
    saves and, with costs, the mean and P90 total cost, what the mitigation costs, and
    whether it is worth it."""
    currency = each.get("currency")
    money = (lambda value: money_text(value, currency)) if currency else _fmt
    lines = ["value of each mitigation: every risk as assessed (pre) against the same with only "
             "that risk mitigated, on the same sampled worlds; reduction = pre - mitigated "
             "(positive: the mitigation lowers it); a P90 is lower or higher, a mean reduction "
             "helps or hurts, only beyond Monte Carlo noise (95%)"
             + ("; worth it only where the mitigation, its own cost included, lowers the mean "
                "total cost beyond noise" if currency else "")]
    w = name_width(name for value in each["risks"].values() for name in value["strategies"])
    header = (f"    {'strategy':{w}} {'P90 ' + heading('trough_depth'):>30} "
              f"{'mean ' + label('shortfall_gpu_days') + ' reduction [95% CI]':>40}")
    if currency:
        header += (f" {'mean cost reduction [95% CI]':>32} {'P90 cost':>33} "
                   f"{'it costs':>9}  verdict")
    for risk, value in each["risks"].items():
        simulated = (f"one more simulation, {value['wall_seconds']:.2f} s"
                     if value["wall_seconds"] else "the post side: no more simulation")
        lines += [f"  {escaped(risk)} ({simulated}):", header]
        for name, entry in value["strategies"].items():
            depth, shortfall = entry["trough_depth"], entry["shortfall_gpu_days"]
            cells = [f"    {escaped(name):{w}}", f"{_moved(depth, _fmt):>30}",
                     f"{_reduced(shortfall, _fmt):>40}"]
            if "cost_total" in entry:
                total = entry["cost_total"]
                cells += [f"{_reduced(total, money, verdict=False):>32}",
                          f"{_moved(total, money):>33}",
                          f"{money(entry['mitigation_cost']['mean']):>9} ",
                          entry["worth"].replace("_", " ")]
            lines.append(" ".join(cells))
    return "\n".join(lines)


def _moved(d: dict, fmt: Callable[[float | None], str]) -> str:
    """'2,048 to 1,024 lower': a P90 without and with the mitigation, and the change."""
    return f"{fmt(d['p90_pre'])} to {fmt(d['p90_mitigated'])} {_CHANGE_WORDS[d['p90_change']]}"


def _reduced(d: dict, fmt: Callable[[float | None], str], verdict: bool = True) -> str:
    """'1,234 [1,000, 1,468] helps': the mean reduction with its interval (and verdict)."""
    ci = d["mean_ci"]
    interval = f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci is not None else "n/a"
    return (f"{fmt(d['mean'])} {interval}"
            + (f" {d['verdict'].replace('_', ' ')}" if verdict else ""))


def _interval(ci: list[float] | None, needs: int, samples: int,
              fmt: Callable[[float | None], str] = _fmt) -> str:
    """[low, high], or why there is none: never a zero-width interval from too few samples."""
    if ci is not None:
        return f"[{fmt(ci[0])}, {fmt(ci[1])}]"
    return f"n/a (needs >= {needs} scenarios)" if samples < needs else "n/a"


def format_compare_mitigation(m: dict, samples: int) -> str:
    """compare's "value of mitigation" section: per strategy, the table of pre - post."""
    lines = [_mitigation_header(m) + "."]
    if "strategies" not in m:
        return "\n".join(lines + [f"  {m['skipped']}"])
    lines.append("P(helps) / P(hurts): share of scenarios where mitigation lowers / raises "
                 "it; verdict from the 95% interval of the mean: helps or hurts only where "
                 "it excludes 0")
    for name, per_metric in m["strategies"].items():
        lines += ["", f"{escaped(name)}:",
                  format_comparison(name, name, per_metric, samples, difference="pre - post",
                                    worse="P(helps)", better="P(hurts)")]
    if "each_risk" in m:
        lines += ["", format_each_mitigation(m["each_risk"])]
    return "\n".join(lines)


def count_noun(n: int, one: str, many: str | None = None) -> str:
    """'1 strategy', '2 strategies': a count with its noun in the right number."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def format_costs(summary: dict) -> str:
    """The cost table under the ranked table, in ranking order: per strategy the mean, P50,
    P90 and P99 of cost_total and its largest components at the mean, money as $1.23M in
    the run's currency; empty for a run without costs (summary.json has no `costs`)."""
    from ..results.compare import money_text
    from ..results.ranking import rank_label
    from ..results.costs import largest_components
    from ..report.text import visible

    block = summary.get("costs")
    if not block:
        return ""
    currency = block["currency"]
    start, end = block["window_days"]

    def money(value: float | None) -> str:
        return money_text(value, currency)

    w = name_width(summary["ranking"])
    cell = max([9, *(len(money(summary["strategies"][name]["costs"]["cost_total"][key]))
                     for name in summary["ranking"] for key in ("mean", "p50", "p90", "p99"))])
    lines = [f"cost in {visible(currency)} over days {start:,.0f}-{end:,.0f} (every cost "
             + ("counts only what happens before the horizon):" if not start else
                "counts only what happens from the status date to the horizon; spent before "
                "it: realized so far, above):"),
             f"{'rank':4} {'strategy':{w}} "
             + " ".join(f"{head:>{cell}}" for head in ("mean", "P50", "P90", "P99"))
             + "  largest components at the mean"]
    ranks = summary.get("ranks") or {}
    for position, name in enumerate(summary["ranking"], start=1):
        entry = ranks.get(name)
        per_cost = summary["strategies"][name]["costs"]
        total = per_cost["cost_total"]
        parts = ", ".join(f"{part} {money(mean)}" for part, mean in largest_components(per_cost))
        lines.append(f"{rank_label(entry) if entry else position:<4} {visible(name):{w}} "
                     + " ".join(f"{money(total[key]):>{cell}}"
                                for key in ("mean", "p50", "p90", "p99"))
                     + f"  {parts or '-'}")
    return "\n".join(lines)


def format_jobs(summary: dict) -> str:
    """The job-mix table under the cost table: report/jobs.py's rows (strategies in ranking
    order, the P50 and P90 of unservable_gpu_days and each class's homeless days) under a
    two-line header (the column, then P50 and P90), its definition first; empty for a run
    without a job mix (summary.json has no `jobs`)."""
    from ..report.jobs import STATISTICS, definition_text, job_rows
    from ..report.text import visible

    groups, rows = job_rows(summary)
    if not rows:
        return ""
    cell = max(8, *(len(c) for _, cells in rows for c in cells))
    width = [max(len(g), len(STATISTICS) * (cell + 1) - 1) for g in groups]
    top = " ".join(f"{g:>{w}}" for g, w in zip(groups, width))
    sub = " ".join(f"{' '.join(f'{k.upper():>{cell}}' for k in STATISTICS):>{w}}"
                   for w in width)
    w = name_width(name for name, _ in rows)
    lines = [definition_text(summary), f"{'':{w}} {top}", f"{'strategy':{w}} {sub}"]
    for name, cells in rows:
        pairs = [cells[k:k + len(STATISTICS)] for k in range(0, len(cells), len(STATISTICS))]
        lines.append(f"{visible(name):{w}} " + " ".join(
            f"{' '.join(f'{c:>{cell}}' for c in pair):>{w}}" for pair, w in zip(pairs, width)))
    return "\n".join(lines)


def format_status(summary: dict) -> str:
    """A run with a status: the status (as_of, file, sha256), what the numbers are about,
    what has happened and the history realized so far (report/status.py's words, as the
    report and summary.md show them); empty without a status."""
    from ..report.status import history_rows, status_words
    from ..report.text import visible

    words = status_words(summary)
    if words is None:
        return ""
    lines = [visible(words["title"]), visible(words["window"]), "what has happened:"]
    lines += [f"  {visible(line)}" for line in words["happened"]]
    headers, rows = history_rows(summary)
    lines.append(visible(words["history"]))
    w = name_width(name for name, _ in rows)
    widths = [max(len(h), *(len(cells[k]) for _, cells in rows)) for k, h in enumerate(headers)]
    lines.append(f"  {'':{w}}  " + "  ".join(f"{h:>{n}}" for h, n in zip(headers, widths)))
    lines += [f"  {visible(name):{w}}  " + "  ".join(f"{c:>{n}}" for c, n in zip(cells, widths))
              for name, cells in rows]
    return "\n".join(lines)


def format_executing(summary: dict) -> str:
    """The executing strategy's line (where it ranks, its P90 trough and shortfall, its
    completion, its cost); empty when the scenario names none."""
    from ..report.status import executing_words
    from ..report.text import visible

    text = executing_words(summary)
    return visible(text) if text else ""
