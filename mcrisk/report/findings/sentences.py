"""Findings: plain-language sentences computed from the run's per-scenario metrics.

Returns plain text; the HTML and Markdown writers escape it. Every sentence is true of the
sampled scenarios as they are:

- counts are exact ("in 19,998 of 20,000 scenarios"), read from
  metrics[scenario, strategy, metric] (metric order: mcrisk.core.definitions.METRICS), never
  "9 of 10" read off a percentile;
- a sentence about two quantities at once (how deep and how long) states thresholds that
  hold jointly in a counted number of scenarios (joint_trough), never two separate P90s
  joined as if one scenario had both;
- a difference between strategies is claimed only beyond Monte Carlo noise: the ranking's
  paired test (summary["ranks"], when present) or a paired interval on the same worlds that
  excludes 0 (mcrisk.results.compare.paired_difference);
- time after the horizon is not counted in the trough metrics: where a strategy completes
  after it, the findings say so.

The "why" of a strategy's loss is read from its plan: what its drains wait for, and whether
its new units go into rows that must first be emptied and retrofitted. Two strategies that
differ only in their drain trigger (on a shipment's arrival against on the replacements'
acceptance) are compared head to head (gating_pairs, gating).
"""
from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

import numpy as np

from ...core.definitions import REL_EPS
from ...core.labels import label, unit
from ...core.model import Scenario, Strategy
from ...results.bands import HallPower
from ...results.quantiles import linear_quantile, order_statistics
from .drivers import DRIVER_Z, driven_by  # noqa: F401 (DRIVER_Z: re-exported)
from .gating import gating, soaking  # noqa: F401 (gating: re-exported)
from .words import (_and, _beyond_noise, _column, _count, _interval, _of_size,  # noqa: F401
                    _paired, floor_shown, fmt, share)
from .pairs import acceptance_pairs, gating_pairs  # noqa: F401 (gating_pairs: re-exported)

HORIZON_NOTE_SHARE = 0.01      # a strategy's own paragraph names the horizon from 1% up
# The metrics a sentence names by their label and unit (core.labels).
_NAMED = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days", "completion_day")


def _overlap(a: list[float] | None, b: list[float] | None) -> bool:
    """Whether two intervals overlap; a missing one (too few scenarios) counts as
    overlapping: without it a lead cannot be called beyond noise."""
    if a is None or b is None:
        return True
    return not (a[1] < b[0] or b[1] < a[0])


_TRIGGER_WORDS = {   # a drain wave's trigger: (kind, how a wave of it drains)
    "arrival": "drains when its shipment arrives, without waiting for the new racks to pass "
               "burn-in on a ready fabric",
    "accepted": "waits for its replacements' acceptance",
    "day": "drains on a fixed date",
}


def _trigger_kind(trigger) -> str:
    """accepted (it waits for acceptance, whatever else), arrival, or day (a date alone)."""
    if trigger.on_accepted:
        return "accepted"
    return "arrival" if trigger.on_arrival else "day"


def why(scenario: Scenario, strategy: Strategy) -> str:
    """What in a strategy's plan exposes it to a capacity trough: what its drain waves (the
    old units that share one trigger) wait for, wave by wave where they differ, and whether
    its new units go into rows that must first be emptied. A contingent strategy's plan is
    its decision between two written ones."""
    if (d := strategy.decision) is not None:
        when = f"on day {fmt(d.day)}" if d.on is None else f"at {d.on[0]} of {d.on[1]}"
        return (f"{when} it decides between {d.met} and {d.unmet}, and follows "
                "in each world the one its decision takes there")
    waves: dict = {}
    for unit_id, trigger in strategy.drains:
        waves.setdefault(trigger, []).append(unit_id)
    kinds = [(_trigger_kind(t), t, units) for t, units in waves.items()]
    found = {kind for kind, _, _ in kinds}
    reasons = []
    if found == {"arrival"}:
        reasons.append("it drains old capacity when shipments arrive, without waiting for "
                       "the new racks to pass burn-in on a ready fabric")
    elif found == {"day"}:
        days = sorted({t.day for _, t, _ in kinds})
        reasons.append(f"it drains old capacity on a fixed date (day {fmt(days[0])}"
                       + (f" to {fmt(days[-1])}" if len(days) > 1 else "")
                       + "), whatever the new racks' state")
    elif len(found) > 1:
        parts = []
        for kind in ("accepted", "arrival", "day"):
            these = [(t, units) for k, t, units in kinds if k == kind]
            if not these:
                continue
            units = [u for _, us in these for u in us]
            count = (f"{len(these)} of its {len(kinds)} drain waves" if not parts
                     else f"{len(these)}")
            which = "" if kind == "accepted" else f" ({unit_list(units)})"
            verb = _TRIGGER_WORDS[kind]
            if len(these) > 1:
                verb = (verb.replace("waits", "wait", 1).replace("drains", "drain", 1)
                        .replace("its shipment arrives", "their shipments arrive"))
            if kind == "accepted" and len(these) > 1:
                verb = verb.replace("its replacements'", "their replacements'")
            if kind == "day":
                days = sorted({t.day for t, _ in these})
                verb += (f" (day {fmt(days[0])}" + (f" to {fmt(days[-1])}" if len(days) > 1
                                                    else "") + "), whatever the new racks' "
                         "state")
            parts.append(f"{count}{which} {verb}")
        reasons.append("; ".join(parts))
    occupied = {u.row for u in scenario.existing}
    reused = sorted({row for _, row in strategy.placement if row in occupied})
    if reused:
        reasons.append(f"its new racks go into rows still in service ({', '.join(reused[:4])}"
                       f"{'…' if len(reused) > 4 else ''}), which must be emptied (and "
                       "retrofitted) first")
    if not reasons:
        return "its drains wait for acceptance, so its losses come from slower bring-up"
    return "; ".join(reasons)


# ---- what the per-scenario metrics say ----------------------------------------------------

@dataclass(frozen=True)
class JointTrough:
    """In `count` of `total` scenarios the trough is at least `depth` deep (H100-eq) and lasts
    at least `days` days in all, both at once (the thresholds as shown, see floor_shown)."""

    depth: float
    days: float
    count: int
    total: int


def joint_trough(depth: np.ndarray, days: np.ndarray, one_in: int = 10) -> JointTrough | None:
    """Thresholds that at least 1 scenario in `one_in` meets jointly, and the exact count.

    depth: the largest shown value that at least n / one_in scenarios reach; days: among
    those, the largest shown value that n / one_in of them reach too. None when that depth
    is 0 (fewer than 1 in `one_in` scenarios dip at all).
    """
    depth = np.asarray(depth, dtype=np.float64)
    days = np.asarray(days, dtype=np.float64)
    n = depth.shape[0]
    if n == 0:
        return None
    k = max(1, math.ceil(n / one_in))
    # the k-th largest (np.sort(depth)[::-1][k - 1]), read without a sort
    x = floor_shown(order_statistics(depth, [n - k])[0])
    if not x > 0:
        return None
    deep = depth >= x - REL_EPS * max(x, 1.0)
    chosen = days[deep]                                         # deep holds >= k scenarios
    y = floor_shown(order_statistics(chosen, [chosen.size - k], overwrite=True)[0])
    both = deep & (days >= y - REL_EPS * max(y, 1.0))
    return JointTrough(x, y, int(both.sum()), n)


# ---- the paragraphs -----------------------------------------------------------------------

def findings(scenario: Scenario, summary: dict, largest_job: float | None = None,
             hall_power: dict[str, list[HallPower]] | None = None,
             metrics: np.ndarray | None = None, names=None) -> list[str]:
    """Paragraphs for the report's findings, best strategy first.

    metrics[scenario, strategy, metric] (strategies in the order of `names`, metrics in
    mcrisk.core.definitions.METRICS) are the run's per-scenario results; without them (a summary
    alone) the findings state percentiles only, each on its own.
    """
    ranking = summary["ranking"]
    if metrics is None or names is None or metrics.shape[0] == 0:
        return _from_summary(scenario, summary, largest_job, hall_power)
    names = list(names)
    baseline = summary["baseline_h100_eq"]
    horizon = summary["horizon_days"]
    start = _start(summary)
    n = metrics.shape[0]
    col = lambda s, m: _column(metrics, names, s, m)          # noqa: E731
    leader = ranking[0]
    out = [_leader(summary, leader, col, n, baseline, horizon, start)]
    for arrival, gated in gating_pairs(scenario):
        if arrival in names and gated in names:
            out.append(gating(arrival, gated, metrics, names, summary.get("milestones")))
    for first_pass, soaked in acceptance_pairs(scenario):
        if first_pass in names and soaked in names:
            policy = scenario.strategy(soaked).acceptance
            out.append(soaking(first_pass, soaked, policy, metrics, names))
    for name in ranking[1:]:
        out.append(_other(scenario, summary, name, leader, col, n, baseline, horizon, start))
    out += [kept_units(scenario, scenario.strategy(name)) for name in ranking]
    out.append(_horizon_rest(ranking, col, n, horizon, start))
    out.append(_homeless(ranking, col, n, largest_job, summary))
    out.append(_power(ranking, col, n, hall_power))
    return [p for p in out if p]


RANK_ORDER = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days")


def _rank_words(summary: dict, name: str) -> str:
    """' (rank 3, behind rank 2 on P90 trough depth)', ' (rank 4=, tied with big-bang: ...)'
    from summary["ranks"] (mcrisk.results.ranking); '' without it. decided_by is the
    criterion that set the strategy's group apart from the one above, the earlier criteria
    being level within Monte Carlo noise."""
    entry = summary.get("ranks", {}).get(name)
    if not entry:
        return ""
    if entry.get("tied_with"):
        return (f" (rank {entry['rank']}=, tied with {_and(entry['tied_with'])}: no criterion "
                "of the ranking separates them beyond Monte Carlo noise)")
    key = entry.get("decided_by")
    if entry["rank"] == 1 or key not in _NAMED:
        return f" (rank {entry['rank']})"
    level = [label(k) for k in RANK_ORDER[:RANK_ORDER.index(key)]] \
        if key in RANK_ORDER else []
    return (f" (rank {entry['rank']}; behind the rank above on P90 {label(key)} beyond "
            "Monte Carlo noise" + (f", level on P90 {_and(level)}" if level else "") + ")")


def _start(summary: dict) -> _dt.date | None:
    """The run's day 0 as a date (summary.json's start_date), or None."""
    return _dt.date.fromisoformat(summary["start_date"]) if summary.get("start_date") else None


def _on(day: float, start: _dt.date | None, word: str = "") -> str:
    """' (Sun 2027-02-21)': the date day `day` falls on (start + floor(day)), after `word`;
    empty without a start date."""
    from ...results.milestones import day_date, weekday

    iso = day_date(start, day)
    return f" ({word}{weekday(iso)} {iso})" if iso else ""


def since(summary: dict) -> float:
    """The first day the run's metrics count: a status's as_of (its window_days), else 0."""
    status = summary.get("status")
    if isinstance(status, dict) and status.get("window_days"):
        return float(status["window_days"][0])
    return 0.0


def _dips(col, name: str, n: int, baseline: float, horizon: float,
          start: _dt.date | None = None, first: float = 0.0) -> str:
    """How often the strategy dips below the baseline and, jointly, how deep and how long;
    `first`, the window's first day (a status's as_of), when the trough counts from there."""
    depth, days = col(name, "trough_depth"), col(name, "trough_days")
    dipped = int(np.sum(depth > 0))
    window = (f"within the {fmt(horizon)}-day horizon" if first == 0 else
              f"between the status date, day {fmt(first)}{_on(first, start)}, and the "
              f"{fmt(horizon)}-day horizon")
    where = (f"the {fmt(baseline)} H100-eq baseline {window}"
             + _on(horizon, start, "until "))
    if dipped == 0:
        return f"never dips below {where} in any of the {n:,} sampled scenarios."
    text = f"dips below {where} in {_count(dipped, n)}."
    joint = joint_trough(depth, days)
    if joint is None:
        text += (f" The deepest of those troughs is {fmt(depth.max())} H100-eq and the longest "
                 f"{fmt(days.max())} days (not necessarily in the same scenario).")
        return text
    lowest = ("it has nothing in service at its deepest" if joint.depth >= baseline
              else f"its trough is at least {fmt(joint.depth)} H100-eq below the baseline at "
                   "its deepest")
    text += (f" In {joint.count:,} of {joint.total:,} scenarios ("
             f"{share(joint.count, joint.total)}) both hold: {lowest}, and its time below the "
             f"baseline adds up to at least {fmt(joint.days)} days.")
    return text + _long_elsewhere(depth, days, joint)


def _long_elsewhere(depth: np.ndarray, days: np.ndarray, joint: JointTrough) -> str:
    """When the joint days threshold shows below the P90 trough days, the long troughs are
    not the deep ones: say so, with the exact count, so that the joint days are not read as
    the trough's length beside the table's P90."""
    with np.errstate(invalid="ignore", over="ignore"):
        p90 = linear_quantile(days, 0.9)            # numpy.quantile's
    if not fmt(joint.days) != fmt(p90) or p90 <= joint.days:
        return ""
    long = days >= p90 - REL_EPS * max(p90, 1.0)
    shallow = int(np.sum(long & (depth < joint.depth - REL_EPS * max(joint.depth, 1.0))))
    if shallow == 0:
        return ""
    return (f" Of the {int(long.sum()):,} scenarios with at least {fmt(p90)} days below the "
            f"baseline (its P90 trough days), {shallow:,} have a trough less than "
            f"{fmt(joint.depth)} H100-eq deep: the two P90s are separate percentiles.")


def _horizon_note(col, name: str, n: int, horizon: float, start: _dt.date | None = None) -> str:
    done = col(name, "completion_day")
    late = int(np.sum(done > horizon))
    if late < HORIZON_NOTE_SHARE * n:
        return ""
    with np.errstate(invalid="ignore", over="ignore"):
        p50, p99 = (linear_quantile(done, q) for q in (0.5, 0.99))     # numpy.quantile's
    days = f"P50 completion day {fmt(p50)}{_on(p50, start)}, P99 {fmt(p99)}{_on(p99, start)}"
    return (f" It completes after the {fmt(horizon)}-day horizon{_on(horizon, start, 'until ')} in "
            f"{_count(late, n, extra=days)}; time after the horizon is not "
            f"counted, so there its {label('trough_days')} and {label('shortfall_gpu_days')} are "
            "lower bounds.")


def _leader(summary: dict, leader: str, col, n: int, baseline: float, horizon: float,
            start: _dt.date | None = None) -> str:
    short = summary["strategies"][leader]["shortfall_gpu_days"]
    ci = short.get("p90_ci")
    tied = summary.get("ranks", {}).get(leader, {}).get("tied_with")
    text = (f"{leader} ranks first{_rank_words(summary, leader) if tied else ''}. It "
            + _dips(col, leader, n, baseline, horizon, start, since(summary)))
    short_of = int(np.sum(col(leader, "shortfall_gpu_days") > 0))
    if short_of == 0:
        text += (" It never falls short of demand "
                 + ("within the horizon" if since(summary) == 0 else
                    "between the status date and the horizon") + ", in any scenario.")
    else:
        text += (f" It falls short of demand in {_count(short_of, n)}; its P90 shortfall is "
                 f"{fmt(short['p90'])} {unit('shortfall_gpu_days')}"
                 + (f" ({_interval(ci)})" if ci else "")
                 + ".")
    text += _horizon_note(col, leader, n, horizon, start)
    if len(summary["ranking"]) > 1:
        text += " " + _runner_up(summary)
    return text + driven_by(summary, leader)


def _runner_up(summary: dict) -> str:
    """How the leader stands against the strategy ranked next: by the ranking's paired test
    (summary["ranks"]) when present, else by the two P90 intervals (which can show a lead
    beyond noise, but cannot show a tie)."""
    ranking, st = summary["ranking"], summary["strategies"]
    leader, second = ranking[0], ranking[1]
    ranks = summary.get("ranks")
    order = RANK_ORDER
    if ranks and leader in ranks and second in ranks:
        top = ranks[leader]
        if top.get("tied_with"):
            return (f"It shares first place with {', '.join(top['tied_with'])}: no criterion "
                    "of the ranking separates them beyond Monte Carlo noise (paired test on "
                    "the same worlds).")
        key = ranks[second].get("decided_by") or top.get("decided_by")
        if key in st[leader] and key in _NAMED:
            a, b = st[leader][key]["p90"], st[second][key]["p90"]
            before = [k for k in order[:order.index(key)] if k in st[leader]] if key in order \
                else []
            equal = [f"{label(k)} (both {fmt(st[leader][k]['p90'])})" for k in before
                     if st[leader][k]["p90"] == st[second][k]["p90"]]
            within = [label(k) for k in before if st[leader][k]["p90"] != st[second][k]["p90"]]
            tied = ""
            if equal:
                tied += f" Their P90 {' and '.join(equal)} are equal"
            if within:
                tied += (" and" if equal else " Their P90") + \
                    f" {' and '.join(within)} differ within Monte Carlo noise"
            tied += "." if tied else ""
            return (f"It ranks ahead of {second} on P90 {label(key)} ({fmt(a)} against {fmt(b)} "
                    f"{unit(key)}), a difference beyond Monte Carlo noise by a paired test on the "
                    f"same worlds.{tied}")
    m, s2 = st[leader], st[second]
    key = next((k for k in order[:3] if s2[k]["p90"] != m[k]["p90"]), "shortfall_gpu_days")
    base = (f"The runner-up, {second}, has P90 {label(key)} {fmt(s2[key]['p90'])} {unit(key)} "
            f"against {fmt(m[key]['p90'])}")
    if not _overlap(m[key]["p90_ci"], s2[key]["p90_ci"]):
        return base + "; their 95% intervals do not overlap, so the lead is beyond Monte Carlo noise."
    return (base + "; their 95% intervals overlap, so this run does not show the lead to be "
            "beyond Monte Carlo noise.")


def _other(scenario: Scenario, summary: dict, name: str, leader: str, col, n: int,
           baseline: float, horizon: float, start: _dt.date | None = None) -> str:
    text = f"{name}{_rank_words(summary, name)} " + _dips(col, name, n, baseline, horizon, start,
                                                          since(summary))
    if np.any(col(name, "trough_depth") > 0):
        first = since(summary)
        text += f" Its plan: {why(scenario, scenario.strategy(name))}" + (
            "." if first == 0 else
            f" (as written: from the status date on, a step the status does not record "
            f"happens on day {fmt(first)} at the earliest, so one it planned earlier is due "
            f"now).")
    short = _paired(col(name, "shortfall_gpu_days"), col(leader, "shortfall_gpu_days"))
    if _beyond_noise(short):
        more = "more" if short["mean"] > 0 else "less"
        text += (f" Over the same worlds it falls short of demand by "
                 f"{fmt(abs(short['mean']))} {unit('shortfall_gpu_days')} {more} than {leader} "
                 f"on average ({_interval(_of_size(short))}).")
    done = _paired(col(name, "completion_day"), col(leader, "completion_day"))
    if _beyond_noise(done) and not np.any(col(name, "trough_depth") > 0):
        text += (f" It completes {fmt(abs(done['mean']))} days "
                 f"{'later' if done['mean'] > 0 else 'earlier'} than {leader} on average "
                 f"({_interval(_of_size(done))}).")
    text += _horizon_note(col, name, n, horizon, start)
    text += driven_by(summary, name)
    return text


def unit_list(units) -> str:
    """'SU7, SU8' or 'SU1..SU6' (first..last of four or more, in file order)."""
    units = list(units)
    return ", ".join(units) if len(units) <= 3 else f"{units[0]}..{units[-1]}"


def kept_units(scenario: Scenario, strategy: Strategy) -> str:
    """What a strategy's kept units (Strategy.keep) stay in service with: their nominal
    capacity by island and their power by hall, to the horizon; '' when it keeps none (a
    contingent strategy keeps what its branches keep, said of them)."""
    if not strategy.keep or strategy.decision is not None:
        return ""
    capacity: dict[str, float] = {}
    power: dict[str, float] = {}
    hall_of_row = {row.id: row.hall for row in scenario.rows()}
    existing = {old.id: old for old in scenario.existing}
    for unit_id in strategy.keep:
        kept_unit = existing[unit_id]        # not `unit`: that is core.labels' unit here
        kind = scenario.unit_type(kept_unit.type)
        island = scenario.island_of(kept_unit.type, kept_unit.row)     # its row's
        capacity[island] = capacity.get(island, 0.0) + kind.capacity
        hall = hall_of_row[kept_unit.row]
        power[hall] = power.get(hall, 0.0) + kind.power_kw
    kept = _and([f"+{fmt(h100)} H100-eq in island {island}" for island, h100 in capacity.items()])
    draw = _and([f"{fmt(kw)} kW in hall {hall}" for hall, kw in power.items()])
    return (f"{strategy.name} keeps {unit_list(strategy.keep)} in service to day "
            f"{fmt(scenario.horizon_days)}, never drained: {kept} (nominal) stay in its capacity "
            f"and {draw} in its draw, with their running and power costs where [costs] prices "
            "them; its completion day does not wait for them.")


def _horizon_rest(ranking: list[str], col, n: int, horizon: float,
                  start: _dt.date | None = None) -> str:
    """The strategies that complete after the horizon in a few scenarios (under
    HORIZON_NOTE_SHARE: their own paragraphs do not say it)."""
    few = []
    for name in ranking:
        late = int(np.sum(col(name, "completion_day") > horizon))
        if 0 < late < HORIZON_NOTE_SHARE * n:
            few.append(f"{name} ({late:,} of {n:,} scenarios, {share(late, n)})")
    if not few:
        return ""
    return (f"Under {_and(few)}, completion passes the {fmt(horizon)}-day horizon"
            f"{_on(horizon, start, 'until ')} in a few "
            "scenarios (under " f"{HORIZON_NOTE_SHARE:.0%}); time after the horizon is not "
            "counted in those scenarios' trough and shortfall.")


def _homeless(ranking: list[str], col, n: int, job: float | None, summary: dict) -> str:
    size = f" ({fmt(job)} H100-eq)" if job else ""
    never, hit = [], []
    for name in ranking:
        days = col(name, "homeless_days")
        count = int(np.sum(days > 0))
        if count == 0:
            never.append(name)
        else:
            p90 = summary["strategies"][name]["homeless_days"]["p90"]
            hit.append(f"{name} in {_count(count, n, extra=f'P90 {fmt(p90)} days in all')}")
    if not hit:
        return (f"The largest job{size} has an island big enough throughout, in all {n:,} "
                "scenarios under every strategy.")
    text = f"The largest job{size} goes without an island big enough for a while under " \
           + "; ".join(hit) + "."
    if never:
        text += f" Under {_and(never)} it always has one, in all {n:,} scenarios."
    return text


def _power(ranking: list[str], col, n: int, hall_power) -> str:
    over = [(name, int(np.sum(col(name, "power_violation") > 0.5))) for name in ranking]
    over = [(name, k) for name, k in over if k > 0]
    if not over:
        return f"No strategy exceeds a hall's power cap in any of the {n:,} scenarios."
    parts = []
    for name, k in over:
        halls = ""
        if hall_power:
            worst = [f"hall {h.hall} {h.probability_over:.1%}" for h in hall_power[name]
                     if h.probability_over > 0]
            halls = f" ({', '.join(worst)})" if worst else ""
        parts.append(f"{name} in {_count(k, n)}{halls}")
    return ("WARNING: power caps are exceeded: some hall goes over its cap under "
            + "; ".join(parts) + ". Such a plan is not feasible as written.")


# ---- without per-scenario metrics: percentiles, each on its own --------------------------

def _from_summary(scenario: Scenario, summary: dict, largest_job, hall_power) -> list[str]:
    ranking, st = summary["ranking"], summary["strategies"]
    out = []
    for i, name in enumerate(ranking):
        m = st[name]
        depth, days, short = "trough_depth", "trough_days", "shortfall_gpu_days"
        text = (f"{name}{' ranks first' if i == 0 else ''}{_rank_words(summary, name)}: P90 "
                f"{label(depth)} {fmt(m[depth]['p90'])} {unit(depth)}; P90 {label(days)} "
                f"{fmt(m[days]['p90'])}; P90 {label(short)} {fmt(m[short]['p90'])} "
                f"{unit(short)} (separate percentiles, not one scenario).")
        if i == 0 and len(ranking) > 1:
            text += " " + _runner_up(summary)
        out.append(text)
    power = [f"{n} {st[n]['power_violation']['probability']:.1%}" for n in ranking
             if st[n]["power_violation"]["probability"] > 0]
    if power:
        out.append("WARNING: power caps are exceeded: probability of any hall over its cap: "
                   + "; ".join(power) + ". Such a plan is not feasible as written.")
    return out

