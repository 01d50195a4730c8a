"""A strategy's best case: the day it completes when everything goes as well as it can.

Every duration, delay and date at the smallest value its distribution can take (a lognormal
without `min`: 0; a `chance` below 1: 0), no risk happening, every burn-in passing at its
first attempt (its second when fail_first is 1) and no early failure (one whose chance is 1
counts where it ends in an acceptance soak). It is worked out here from the rules of
docs/scenario-format.md (Semantics), as a plain event-by-event pass, not by the compiled plan
or a kernel: sanity.py compares it to the horizon. Leaving risks and uncertain failures out
makes it a lower bound on every simulated completion day.

The pass is Kahn's algorithm over the plan's events, each timed once everything it waits
for is; a row's retrofit waits for a crew as well: when nothing else can be timed, the row
ready first (ties: file order) takes the crew free first. An event that never gets a time
(waiting in a circle) means the strategy can never complete: +inf.
"""
from __future__ import annotations

import heapq
import math

from mcrisk.core.model import DateSpec, Distribution, Scenario, Strategy


def smallest(dist: Distribution) -> float:
    """The smallest value `dist` can take (a lower bound for an unbounded lognormal: 0)."""
    if dist.kind == "chance":
        return smallest(dist.inner) if dist.params[0] >= 1.0 else 0.0
    if dist.kind == "lognormal":
        return dist.bounds[0] if dist.bounds is not None else 0.0
    return float(dist.params[0])     # fixed: its value; uniform, triangular, pert: their min


def earliest_date(scenario: Scenario, spec: DateSpec | None) -> float:
    """A date at its earliest: day + smallest delay + smallest shared delays; day 0 if none."""
    if spec is None:
        return 0.0
    shared = dict(scenario.shared_delays)
    return spec.day + smallest(spec.delay) + sum(smallest(shared[name]) for name in spec.shared)


def earliest_completion(scenario: Scenario, strategy: Strategy) -> float:
    """The strategy's completion day at best (module docstring): the latest removal of the
    units it drains and acceptance of the new units; +inf if it can never complete."""
    events = _events(scenario, strategy)
    time = _time_events(events, _crews(scenario, strategy))
    ends = [("removed", unit) for unit, _ in strategy.drains] + \
        [("accepted", unit.id) for unit in scenario.incoming]
    return max((time.get(end, math.inf) for end in ends), default=0.0)


def _crews(scenario: Scenario, strategy: Strategy) -> int:
    return strategy.crews_in(scenario.retrofit)


def _events(scenario: Scenario, strategy: Strategy) -> dict:
    """event -> (its own day, the events it waits for, days added after them, crew?); a crew
    event's days are the retrofit's, added from when a crew starts it."""
    types = {kind.id: kind for kind in scenario.unit_types}
    type_of = {unit.id: unit.type for unit in (*scenario.existing, *scenario.incoming)}
    standing: dict[str, list[str]] = {}
    for unit in scenario.existing:
        standing.setdefault(unit.row, []).append(unit.id)
    events: dict = {}
    for ship in scenario.shipments:
        events[("arrival", ship.id)] = (earliest_date(scenario, ship.arrival), [], 0.0, False)
    for hall in scenario.halls:
        events[("energized", hall.id)] = (earliest_date(scenario, hall.energized), [], 0.0,
                                          False)
    for island in scenario.islands:
        ready = earliest_date(scenario, island.delivery) + smallest(island.install_days) \
            if island.delivery is not None else 0.0
        events[("island", island.id)] = (ready, [], 0.0, False)
    for unit, trigger in strategy.drains:
        kind = types[type_of[unit]]
        events[("drain", unit)] = (trigger.day or 0.0, [("arrival", s) for s in trigger.on_arrival]
                                   + [("accepted", n) for n in trigger.on_accepted],
                                   trigger.lag_days, False)
        events[("removed", unit)] = (0.0, [("drain", unit)],
                                     smallest(kind.drain_days) + smallest(kind.removal_days),
                                     False)
    liquid_rows = {row for unit, row in strategy.placement
                   if types[type_of[unit]].cooling == "liquid"}
    for hall in scenario.halls:
        for row in hall.rows:
            here = standing.get(row.id, [])
            never = math.inf if set(here) & set(strategy.keep) else 0.0
            waits = [("removed", u) for u in here if u not in strategy.keep]
            events[("empty", row.id)] = (never, waits + [("energized", hall.id)], 0.0, False)
            retrofit = row.cooling == "air" and row.id in liquid_rows
            if retrofit:
                events[("retrofit", row.id)] = (0.0, [("empty", row.id)],
                                                smallest(scenario.retrofit.days), True)
            events[("position", row.id)] = (
                0.0, [("retrofit" if retrofit else "empty", row.id)], 0.0, False)
    shipment_of = {unit: ship.id for ship in scenario.shipments for unit in ship.units}
    for unit, row in strategy.placement:
        kind = types[type_of[unit]]
        events[("install", unit)] = (0.0, [("arrival", shipment_of[unit]), ("position", row)],
                                     0.0, False)
        events[("passed", unit)] = (0.0, [("install", unit)],
                                    smallest(kind.install_days) + _burn_in(kind), False)
        island = scenario.island_of(kind.id, row)
        events[("accepted", unit)] = (0.0, [("passed", unit), ("island", island)],
                                      _soak(kind, strategy), False)
    return events


def _failures(kind) -> int:
    """Failed burn-in attempts at best: none, or one when every first attempt fails."""
    return int(kind.burn_in is not None and kind.burn_in.fail_first >= 1.0)


def _burn_in(kind) -> float:
    """Burn-in at best: one attempt; with fail_first = 1, an attempt, a fix and a retry
    (validation makes a retry able to pass then)."""
    b = kind.burn_in
    if b is None:
        return 0.0
    if _failures(kind) == 0:
        return smallest(b.attempt_days)
    return 2 * smallest(b.attempt_days) + smallest(b.fix_days)


def _soak(kind, strategy: Strategy) -> float:
    """The acceptance policy's soak at best: only for a unit whose best case has failed often
    enough, with a certain early failure during the soak repaired before acceptance."""
    policy = strategy.acceptance
    if policy is None or kind.burn_in is None or _failures(kind) < policy.soak_after_failures:
        return 0.0
    soak = smallest(policy.soak_days)
    early = kind.early_failures
    if early is not None and early.chance_after_burnin_failure >= 1.0 \
            and smallest(early.age_days) < soak:
        return soak + smallest(early.repair_days)
    return soak


def _time_events(events: dict, crews: int) -> dict:
    """Kahn's algorithm with crews (module docstring): event -> day, for every event that
    gets one."""
    users: dict = {event: [] for event in events}
    waiting = {}
    for event, (_, deps, _, _) in events.items():
        waiting[event] = len(set(deps))
        for dep in set(deps):
            users[dep].append(event)
    order = {event: i for i, event in enumerate(events)}
    time: dict = {}
    queue = [event for event, count in waiting.items() if count == 0]
    ready_for_crew: list = []                 # a heap of (day ready, file order, event)
    crew_free = [0.0] * crews                 # a heap of the days each crew is free
    while queue or ready_for_crew:
        while queue:
            event = queue.pop()
            base, deps, add, crew = events[event]
            start = max([base] + [time[d] for d in deps])
            if crew:
                heapq.heappush(ready_for_crew, (start, order[event], event))
                continue
            time[event] = start + add
            for user in users[event]:
                waiting[user] -= 1
                if waiting[user] == 0:
                    queue.append(user)
        if ready_for_crew:
            ready, _, event = heapq.heappop(ready_for_crew)
            time[event] = max(ready, heapq.heappop(crew_free)) + events[event][2]
            heapq.heappush(crew_free, time[event])
            queue.extend(user for user in users[event] if _done_waiting(waiting, user))
    return time


def _done_waiting(waiting: dict, user) -> bool:
    waiting[user] -= 1
    return waiting[user] == 0
