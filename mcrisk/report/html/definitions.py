"""The closing sections of report.html: "Definitions and assumptions" (what every number
means, in the words of docs/metrics.md, with this run's values) and "Provenance" (where the
numbers come from: scenario file and hash, seed, samples, backend, version, times)."""
from __future__ import annotations

from ...core.definitions import REL_EPS
from ...core.labels import unit
from ...core.outputs import metrics_parquet_text
from ...results.mitigation import risk_mode_text
from ..findings.sentences import fmt
from .parts import horizon_date_text
from ..text import html_text


def given(value: float) -> str:
    """A value as the scenario gives it, never rounded to fmt's one decimal (0.08 stays 0.08,
    2.25 stays 2.25): thousands separators, up to 6 significant digits."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _demand_text(points) -> str:
    """The demand points in words: 'day 0: 2,048; day 150: 2,048; day 360: 2,816 H100-eq'."""
    shown = points if len(points) <= 8 else (*points[:3], None, *points[-3:])
    return "; ".join("…" if p is None else f"day {given(p[0])}: {given(p[1])}" for p in shown) \
        + " H100-eq"


def _demand_item(demand) -> str:
    """How demand is read: the fixed points, or the forecast's formula with its drawn growth."""
    f = demand.forecast
    if f is None:
        return (f"<b>Demand</b> D(t) is read piecewise linearly between the scenario's points "
                f"({_demand_text(demand.points)}), and flat before the first point and after "
                "the last.")
    return (f"<b>Demand</b> D(t) = {given(f.workload_at_day0)} {html_text(f.unit)} × (1 + g)"
            f"<sup>t/365</sup> / {given(f.per_h100)} {html_text(f.unit)} per H100: a forecast "
            "whose yearly growth g is drawn once per scenario (the same for every strategy), "
            f"taken every {given(f.points_every_days)} days and joined linearly; the charts draw "
            "its median (P50) curve.")


def _behaviour_items(scenario) -> list[str]:
    """What the scenario adds to capacity and demand beyond the plan: attrition, failures
    after acceptance, acceptance policies, kept units and a job mix (docs/metrics.md)."""
    items = []
    for t in scenario.unit_types:
        if t.attrition is not None:
            a = t.attrition
            items.append(
                f"<b>Attrition</b> of {html_text(t.id)}: each unit counts at its usable share "
                f"1 − {a.interruptions_per_gpu_day:g} interruptions per GPU-day × "
                f"{a.gpus_per_interruption} GPUs out × {given(a.days_out)} days = "
                f"{a.usable_share:.5f} of its capacity (the steady share not out for repair), "
                "the baseline included.")
        if t.early_failures is not None:
            e = t.early_failures
            items.append(
                f"<b>Failures after acceptance</b> of {html_text(t.id)}: a unit fails once in "
                f"its first months of service with chance {given(e.chance)} "
                f"({given(e.chance_after_burnin_failure)} if its burn-in failed before) and "
                "leaves service for its repair; its capacity (ramp steps included) is out "
                "from the failure to the repair's end.")
    for st in (st for st in scenario.strategies if st.decision is None):   # its branches say
        if st.acceptance is not None:
            items.append(
                f"<b>Acceptance policy</b> of {html_text(st.name)}: a unit whose burn-in failed "
                f"{st.acceptance.soak_after_failures} or more times soaks on its fabric before "
                "acceptance; an early failure due in the soak is repaired before acceptance.")
        if st.keep:
            items.append(f"<b>Kept units</b> of {html_text(st.name)}: "
                         f"{html_text(', '.join(st.keep))} stay in service to the horizon, "
                         "never drained, with their power and running cost.")
    if scenario.demand.jobs:
        items.append(
            "<b>Job mix</b>: demand is jobs of " + ", ".join(
                f"{html_text(j.id)} {given(j.size)} H100-eq ({given(100 * j.share)}%)"
                for j in scenario.demand.jobs)
            + "; a job runs inside one island. <code>unservable_gpu_days</code>: demand that "
            "total capacity could hold but the islands could not pack (largest jobs first, "
            "into the island with the most free capacity, whole jobs only), integrated by the "
            f"midpoint rule on cells of {given(scenario.demand.packing_step_days)} day(s); "
            "<code>homeless_days.&lt;class&gt;</code>: the time no island holds one job of "
            "the class.")
    return items


def definitions_html(run) -> str:
    """The section 'Definitions and assumptions': what capacity, the baseline and each metric
    mean, how demand is read, the horizon, what a row retrofit waits for, and the statistics,
    in the words of docs/metrics.md, with this run's values (horizon, baseline, largest job,
    demand points, crews, scenarios)."""
    s, scenario, plan = run.summary, run.scenario, run.plan
    horizon, baseline, job = given(plan.horizon), fmt(plan.baseline), given(plan.largest_job)
    crews = scenario.retrofit.crews
    drawn = [t.id for t in scenario.unit_types if t.performance is not None]
    ramped = [t.id for t in scenario.unit_types if t.ramp is not None]
    realism = ""
    if drawn:
        realism += (" The per-GPU performance of " + ", ".join(html_text(t) for t in drawn)
                    + " is drawn once per scenario.")
    if ramped:
        realism += (" A unit of " + ", ".join(html_text(t) for t in ramped) + " enters at a "
                    "fraction of its capacity that rises in steps (a software-maturity ramp); "
                    "the steps never overstate capacity.")
    metrics = [
        ("trough_depth",
         "the deepest fall below the baseline: the largest B − C(t) over t in [0, H), over "
         "intervals of positive length (0 when C never falls below B)"),
        ("trough_days", "the total time in [0, H) during which C(t) is below B"),
        ("shortfall_gpu_days",
         "the integral over [0, H) of max(0, D(t) − C(t)): capacity missing against demand, "
         "computed exactly (no day grid)"),
        ("homeless_days",
         f"the total time in [0, H) during which no single fabric island holds the largest "
         f"job (J = {job} H100-eq; jobs never span islands)"),
        ("completion_day",
         "the later of the last old unit's removal end and the last new unit's acceptance; "
         "<b>not cut at H</b>: it can lie after the horizon"),
        ("power_violation",
         "whether some hall's draw exceeds its power cap at any time, after the horizon too "
         "(old units draw until removed, new units from install start)"),
    ]
    # the unit as core.labels sets it; a metric without one (power) is reported as a share
    table = ("<table><tr><th>metric</th><th>definition (per scenario and strategy)</th>"
             "<th>unit</th></tr>" + "".join(
                 f"<tr><td><code>{k}</code></td><td>{d}</td>"
                 f"<td>{html_text(unit(k, typeset=True) or 'share of scenarios')}</td></tr>"
                 for k, d in metrics) + "</table>")
    items = [
        "<b>Capacity in service</b> C(t): the sum over the units in service of GPUs × "
        "per-GPU performance relative to one H100 (H100-eq). An old unit counts from day 0 "
        "until its drain starts: its capacity is lost at drain start, before the drain and "
        "removal. A new unit counts from its acceptance: burn-in passed and its fabric island "
        f"ready.{realism} Events at the same instant apply together, so a drain triggered by "
        "an acceptance makes no dip; a dip of zero length is no dip.",
        f"<b>Baseline</b> B = {baseline} H100-eq: the (usable) capacity in service at day 0. "
        "“Below the "
        f"baseline” means C(t) &lt; B by more than {REL_EPS:g} × B, so float rounding never makes a "
        "phantom trough.",
        _demand_item(scenario.demand),
        *_behaviour_items(scenario),
        f"<b>Horizon</b> H = {horizon} days: trough depth, trough days, shortfall and homeless "
        "days count the time from day 0 to H only; events after H change none of them. "
        "Completion is not cut at H. Where a strategy completes after H, its trough days and "
        "shortfall are lower bounds; the findings say in how many scenarios.",
        *_window_items(s),
        "<b>Row retrofit</b> (an air-cooled row that receives liquid-cooled units): it starts "
        "once the row is empty (every old unit in it removed), its hall is energized and a "
        f"crew is free. {crews} crew{'s' if crews != 1 else ''} take{'s' if crews == 1 else ''}"
        " rows in the order they become ready, ties to the row listed first in the scenario "
        "file. Installs and burn-ins are not crew-limited. A new unit's install starts when "
        "both its shipment has arrived and its position is ready (row empty, hall energized, "
        "retrofit done if needed).",
        f"<b>Scenarios</b>: {s['samples']:,} sampled worlds; every strategy plays the same "
        "worlds (common random numbers), so strategies differ only by their plan.",
        "<b>Percentiles</b> (P50, P90, P99) are over the scenarios, with numpy.quantile's "
        "default linear interpolation; at P90, about 9 scenarios in 10 do no worse. Percentiles of "
        "different metrics are separate: the P90 trough depth and the P90 trough days can come "
        "from different scenarios. The <b>P90 interval</b> is a distribution-free 95% "
        "confidence interval from binomial order statistics: two sampled values that hold the "
        "true P90 with probability at least 95%; it needs at least 36 scenarios.",
        "<b>Comparisons</b> between strategies are paired: the difference scenario by "
        "scenario, on the same worlds, with a normal-approximation 95% interval of its mean. "
        "The findings claim a difference only when that interval excludes 0 (or the "
        "ranking's paired test separates the two); their counts (“in 19,998 of 20,000 "
        "scenarios”) are exact counts over the sampled scenarios.",
    ]
    return ('<h2 id="definitions">Definitions and assumptions</h2>'
            "<p>What the numbers in this report mean (docs/metrics.md has the full "
            "definitions). H is the horizon, C(t) the capacity in service, B the baseline, "
            "D(t) demand.</p>" + table
            + "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>")


def _window_items(s: dict) -> list[str]:
    """With a status, the item that says which days the numbers count (docs/metrics.md,
    Windows); none without one."""
    st = s.get("status")
    if not st:
        return []
    start, end = (fmt(x) for x in st["window_days"])
    return [f"<b>Status</b> as of day {start}: every metric above and every cost count the "
            f"future, from day {start} to H = {end}, instead of from day 0 (B stays the "
            "capacity at day 0; completion stays a day of the plan); power over cap counts "
            f"the draw in force on day {start} and every later one. Days 0 to {start} are "
            "history, the same in every world: the section “A migration in flight” reports "
            "them as facts."]


def provenance_table(run, report_seconds: float | None, run_label: str | None) -> str:
    """Where the numbers come from: scenario file and hash, samples, seed, backend, version,
    random numbers, times, the risk register as run and how percentiles are taken."""
    s = run.summary
    rows = [("scenario", f"<code>{html_text(s['scenario'])}</code>"),
            ("scenario sha256", f"<code>{html_text(s['scenario_sha256'])}</code>"),
            ("scenario name", html_text(s.get("scenario_name", ""))),
            ("samples", f"{s['samples']:,}"), ("seed", html_text(str(s["seed"]))),
            ("backend", f"{html_text(s['backend'])} ({html_text(s.get('backend_reason', ''))})"),
            ("mcrisk version", html_text(s["mcrisk_version"])), ("random numbers", html_text(s["rng"])),
            ("chunk size", f"{s.get('chunk_size', 0):,}"),
            *((("start date (day 0)", html_text(s["start_date"])),
               ("horizon", f"day {fmt(s['horizon_days'])}{horizon_date_text(s).split(' · ')[0]}; a day t "
                "falls on start date + floor(t)"))
              if s.get("start_date") else ()),
            *_status_rows(s),
            ("simulation wall time", f"{s['wall_seconds']:.2f} s (incl. streaming the tables)"),
            ("run created (UTC)", html_text(s.get("created_utc", "")))]
    if report_seconds is not None:
        rows.append(("report wall time", f"{report_seconds:.2f} s"))
    if run_label:
        rows.insert(0, ("nightly run", f"<code>{html_text(run_label)}</code>"))
    if "risks" in s:
        rows.append(("risk register", html_text(risk_mode_text(s["risks"]))))
    kept = metrics_parquet_text(s.get("metrics_parquet"))
    if kept:
        rows.append(("per-scenario rows", html_text(kept)))
    rows.append(("percentiles", "P50/P90/P99 over scenarios as numpy.quantile's default (linear); "
                 "P90 CI: distribution-free, binomial order statistics; capacity bands: "
                 "numpy 'inverted_cdf' at integer days (events at time ≤ d count)"))
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _status_rows(s: dict) -> tuple:
    """The provenance rows of a run with a status: its file, sha256, as_of and the windows."""
    st = s.get("status")
    if not st:
        return ()
    start, end = st["window_days"]
    date = f" ({html_text(st['as_of_date'])})" if st.get("as_of_date") else ""
    return (("status file", f"<code>{html_text(st['path'])}</code>"),
            ("status sha256", f"<code>{html_text(st['sha256'])}</code>"),
            ("status as of", f"day {fmt(st['as_of'])}{date}"),
            ("windows", f"the run's metrics, costs, ranking and percentiles: days {fmt(start)} "
                        f"to {fmt(end)}; the history (realized so far, measured once on "
                        f"{st['history']['worlds']} worlds): days 0 to {fmt(start)}"))
