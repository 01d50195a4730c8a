"""Sanity checks with numbers, on a scenario that has been read (issue 28, 3a and 4).

Errors (located Problems, raised by load_scenario like any other): a hall whose existing
units draw UNIT_SLIP (100) times its power_cap_kw or more at day 0 (a cap typed in MW, 1.6 for
1,600 kW, would otherwise run as a plan over its cap from its first day). A smaller excess
at day 0 is a warning: a plan over its cap is what the run measures (power_violation).

Warnings (plain sentences, file and key first; `mcrisk validate` and `mcrisk run` print them
and a run records them in summary.json `warnings`), each about something valid that is most
likely not meant:
- an unbounded lognormal (no `max`; inside a `chance` too) that puts more than 0.1% of its
  draws past the horizon, as a day or delay measured from its base (a date's planned day;
  for a shared delay the latest planned day of a date naming it; 0 for a duration);
- a job class (or largest_job, without a mix) larger than every island can ever hold (the
  capacity of all its units at their largest performance): it is never placed;
- a strategy whose best case (earliest.py: every duration and delay at its smallest value, no
  risk or failure happening) completes after LATE_COMPLETION (3) times the horizon, with
  both days. A strategy that can never complete at all is an error (completion_problems).
"""
from __future__ import annotations

import math

import numpy as np

from ..core.distributions import cdf, encode
from ..core.errors import NO_VALUE, Problem
from ..core.model import Distribution, Scenario
from .earliest import earliest_completion

PAST_HORIZON_SHARE = 0.001


UNIT_SLIP = 100.0      # a day-0 draw this many times the cap: a unit slip, an error
LATE_COMPLETION = 3.0  # a best case past this many horizons: a warning


def power_problems(scenario: Scenario) -> list[Problem]:
    """A hall whose existing units draw UNIT_SLIP times its cap or more at day 0, with the
    numbers (and the cap x 1000 when that would hold them: MW typed for kW). A smaller
    excess is a plan over its cap, which the run measures (a warning, _over_cap)."""
    return [problem for problem, ratio in _over_cap(scenario) if ratio >= UNIT_SLIP]


def _over_cap(scenario: Scenario) -> list[tuple[Problem, float]]:
    problems = []
    types = {kind.id: kind for kind in scenario.unit_types}
    for h, hall in enumerate(scenario.halls):
        rows = {row.id for row in hall.rows}
        units = [u for u in scenario.existing if u.row in rows]
        draw = sum(types[u.type].power_kw for u in units)
        if draw <= hall.power_cap_kw:
            continue
        hint = (f"power_cap_kw is in kW: if {_n(hall.power_cap_kw)} was meant in MW, write "
                f"{_n(hall.power_cap_kw * 1000)}" if hall.power_cap_kw * 1000 >= draw else
                "raise power_cap_kw to the hall's real cap, or check power_kw of the units' types")
        problems.append((Problem(
            scenario.path, f"halls[{h}].power_cap_kw", hall.power_cap_kw,
            f"hall {hall.id} draws {_n(draw)} kW at day 0 (its {len(units)} existing units), "
            f"{draw / hall.power_cap_kw:,.4g} x its cap", hint), draw / hall.power_cap_kw))
    return problems


def scenario_warnings(scenario: Scenario) -> list[str]:
    """Every warning of the module docstring, in file order."""
    over = [f"{p.file}: {p.key} = {_n(p.value)}: {p.message}; the run measures it as a "
            f"power violation from day 0 ({p.hint})"
            for p, ratio in _over_cap(scenario) if ratio < UNIT_SLIP]
    return over + _horizon_warnings(scenario) + _job_warnings(scenario) + \
        _completion_warnings(scenario)


def completion_problems(scenario: Scenario) -> list[Problem]:
    """A strategy that can never complete, even at its best (earliest.py): an event of it
    waits, through others, for itself. Validation's deadlock check refuses the cycles it
    knows (drains on acceptances); this is the last word, on the plan as a whole."""
    return [Problem(scenario.path, f"strategies[{i}]", NO_VALUE,
                    f"strategy {strategy.name!r} can never complete: even with every duration "
                    "and delay at its smallest, some of its work waits, through other work, "
                    "for itself", "check its drain triggers (on_accepted) against the rows "
                    "it places those units in")
            for i, strategy in enumerate(scenario.strategies)
            if earliest_completion(scenario, strategy) == math.inf]


def _completion_warnings(scenario: Scenario) -> list[str]:
    """A strategy whose best case completes after LATE_COMPLETION x the horizon."""
    late = LATE_COMPLETION * scenario.horizon_days
    out = []
    for i, strategy in enumerate(scenario.strategies):
        best = earliest_completion(scenario, strategy)
        if late < best < math.inf:
            out.append(f"{scenario.path}: strategies[{i}]: strategy {strategy.name!r} "
                       f"completes on day {_n(best)} at the earliest (every duration and delay "
                       f"at its smallest value, no risk or failure happening), past "
                       f"{_n(LATE_COMPLETION)} x the horizon (day {_n(late)}): it never "
                       "completes within the horizon; check its triggers and the dates it "
                       "waits for, or lengthen horizon_days")
    return out


def _n(x: float) -> str:
    return f"{x:,.6g}"


def _past_horizon(dist: Distribution, room: float) -> float:
    """The share of an unbounded lognormal's draws (a chance's included) above `room`; 0 for
    any other distribution or a capped one."""
    weight = 1.0
    if dist.kind == "chance":
        weight, dist = dist.params[0], dist.inner
    if dist.kind != "lognormal" or (dist.bounds is not None and math.isfinite(dist.bounds[1])):
        return 0.0
    if room <= 0.0:
        return weight
    kind, param, _ = encode(dist, [])
    return weight * float(1.0 - cdf(kind, np.array(param), np.zeros(1), room))


def _durations(scenario: Scenario):
    """(key, distribution, base day) of every distribution of the scenario that is a day or
    delay past a base, or a duration (base 0)."""
    dated = {}
    for s, ship in enumerate(scenario.shipments):
        dated[f"shipments[{s}].arrival"] = ship.arrival
    for h, hall in enumerate(scenario.halls):
        if hall.energized is not None:
            dated[f"halls[{h}].energized"] = hall.energized
    for i, island in enumerate(scenario.islands):
        if island.delivery is not None:
            dated[f"islands[{i}].delivery"] = island.delivery
    latest = {}
    for spec in dated.values():
        for name in spec.shared:
            latest[name] = max(latest.get(name, 0.0), spec.day)
    for name, dist in scenario.shared_delays:
        yield f"shared_delays.{name}", dist, latest.get(name, 0.0)
    for key, spec in dated.items():
        yield f"{key}.delay", spec.delay, spec.day
    for i, island in enumerate(scenario.islands):
        yield (f"islands[{i}].install_days", island.install_days,
               island.delivery.day if island.delivery is not None else 0.0)
    for t, kind in enumerate(scenario.unit_types):
        for part in ("install_days", "drain_days", "removal_days"):
            yield f"unit_types[{t}].{part}", getattr(kind, part), 0.0
        if kind.burn_in is not None:
            for part in ("attempt_days", "fix_days", "rma_days"):
                yield f"unit_types[{t}].burn_in.{part}", getattr(kind.burn_in, part), 0.0
        if kind.early_failures is not None:
            for part in ("age_days", "repair_days"):
                yield (f"unit_types[{t}].early_failures.{part}",
                       getattr(kind.early_failures, part), 0.0)
    if scenario.retrofit is not None:
        yield "retrofit.days", scenario.retrofit.days, 0.0
    for r, risk in enumerate(scenario.risks):
        yield (f"risks[{r}].impact", Distribution("chance", (risk.probability,), risk.impact)
               if risk.impact.kind != "chance" else risk.impact, 0.0)


def _horizon_warnings(scenario: Scenario) -> list[str]:
    horizon = scenario.horizon_days
    out = []
    for key, dist, base in _durations(scenario):
        share = _past_horizon(dist, horizon - base)
        if share <= PAST_HORIZON_SHARE:
            continue
        measured = f"day {_n(base)} + the draw" if base > 0.0 else "the draw"
        out.append(f"{scenario.path}: {key}: {share:.2%} of this lognormal's draws put "
                   f"{measured} past the horizon (day {_n(horizon)}), where nothing is "
                   f"measured; if such a slip is not meant, cap it: add max = "
                   f"{_n(max(horizon - base, 1.0))} (or any max) to the distribution")
    return out


def _job_warnings(scenario: Scenario) -> list[str]:
    most, island = _largest_island(scenario)
    demand = scenario.demand
    jobs = [(f"demand.jobs[{j}].size", f"job class {job.id}", job.size)
            for j, job in enumerate(demand.jobs)] or \
        [("demand.largest_job", "the largest job", demand.largest_job)]
    return [f"{scenario.path}: {key}: {what} needs {_n(size)} H100-eq on one island, more "
            f"than any island can ever hold (the largest, {island}, reaches {_n(most)} H100-eq "
            f"with all its units): it is never placed and counts as homeless all the time; "
            f"check its size, or the units' gpus and h100_eq_per_gpu"
            for key, what, size in jobs if size > most * (1.0 + 1e-12)]


def _largest_island(scenario: Scenario) -> tuple[float, str]:
    """(H100-eq, island): the most any island ever holds, all its units at their largest
    performance, in the strategy where it holds the most (a new unit's island follows the
    row its strategy places it in)."""
    def most(kind) -> float:
        return kind.gpus * (_largest(kind.performance) if kind.performance is not None
                            else kind.h100_eq_per_gpu)
    types = {kind.id: kind for kind in scenario.unit_types}
    base: dict[str, float] = {island.id: 0.0 for island in scenario.islands}
    for unit in scenario.existing:
        island = scenario.island_of(unit.type, unit.row)
        base[island] += most(types[unit.type])
    best = (max(base.values(), default=0.0), max(base, key=base.get) if base else "none")
    type_of = {unit.id: unit.type for unit in scenario.incoming}
    for strategy in scenario.strategies:
        held = dict(base)
        for unit, row in strategy.placement:
            held[scenario.island_of(type_of[unit], row)] += most(types[type_of[unit]])
        island = max(held, key=held.get)
        best = max(best, (held[island], island), key=lambda pair: pair[0])
    return best


def _largest(dist: Distribution) -> float:
    from .distributions import largest_draw
    return largest_draw(dist)
