"""No sampled world has a past that did not happen (issue 25, docs/status.md).

A conditioned plan's worlds are simulated (NumPy reference, node times kept) and each of its
strategies is checked against the status directly, through the node times and world
quantities the report and the metrics read, knowing nothing of how the conditioning works:

* every recorded event happens on its recorded day in every world and strategy: a shipment's
  arrival, a hall energized, an island ready, an old unit's drain start and removal end, a new
  unit's install start and end, its burn-in passed, its acceptance, an early failure and its
  return, a row's retrofit start and end;
* every event the status does not record happens after as_of: strictly for what a world
  quantity dates (a shipment, a hall, an island, the end of an activity that was running at
  as_of), at or after as_of for the strategies' own decisions (the floor of
  mcrisk/plan/activities.py: a day-60 drain that has not happened happens at as_of at the
  earliest);
* a burn-in that has not passed needs more attempts than the status records, one that passed
  exactly as many;
* an installed unit stays where it was installed in every strategy: its power is drawn in
  its row's hall;
* a risk that occurred has its recorded impact, one that can no longer occur none.

On the three example status files (with the scenario's risks off, as `mcrisk run` does, and
with every risk on, as `--risks pre`), the reference's story (tests/statuses.py) and the busy
day on reference-2048-full.
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest

from mcrisk.backends.numpy.driver import simulate_chunk
from mcrisk.core.facts import with_facts
from mcrisk.core.risks import select_risks
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario, load_status

from ..helpers import REFERENCE, SCENARIOS
from ..statuses import STORY_DAYS, busy_day, story

SERIES = SCENARIOS / "reference-2048-status"
FULL = SCENARIOS / "reference-2048-full.toml"
N_WORLDS = 3000
EXACT = 1e-9            # days: a recorded day, met exactly (up to a sum's rounding)
# The story's placements of N01 and N02 (row A1) are refused by the strategies that fill A1
# with other racks (tests/plan/test_refusals.py); at day 110 nothing is installed yet.
STORY_STRATEGIES = ("big-bang", "rolling-on-delivery")


@cache
def reference():
    return load_scenario(REFERENCE)


def facts_failing(scenario, status, plan, world, nodes) -> list[str]:
    """What in the simulated worlds contradicts the status: one line per broken fact and
    strategy, with how many worlds break it."""
    as_of = status.as_of
    q = {name: world[:, k] for k, name in enumerate(plan.quantity_names)}
    failures = []
    for s, strategy in enumerate(plan.strategy_names):
        times = nodes[:, s]

        def node(name, times=times):
            return times[:, plan.node_names.index(name)]

        def check(what, x, day, after="at or after", slack=0.0, strategy=strategy):
            """x on the recorded `day`, or (None: not recorded) after as_of (less `slack`:
            a day found by a subtraction, rounded)."""
            if day is not None:
                bad = np.abs(x - day) > EXACT
                rule = f"on day {day:g}"
            elif after == "strictly after":
                bad, rule = ~(x > as_of), f"strictly after as_of {as_of:g}"
            else:
                bad, rule = ~(x >= as_of - slack), f"at or after as_of {as_of:g}"
            if bad.any():
                failures.append(f"{strategy}: {what} not {rule} in {np.count_nonzero(bad)} "
                                f"worlds (e.g. {x[bad][0]!r})")

        arrived, energized = dict(status.arrived), dict(status.energized)
        ready = dict(status.ready)
        for ship in scenario.shipments:
            check(f"shipment {ship.id} arrives", node(f"shipment {ship.id} arrives"),
                  arrived.get(ship.id), "strictly after")
        for hall in scenario.halls:
            if hall.energized is not None:
                check(f"hall {hall.id} energized", node(f"hall {hall.id} energized"),
                      energized.get(hall.id), "strictly after")
        for island in scenario.islands:
            if island.delivery is not None:
                check(f"island {island.id} ready", node(f"island {island.id} ready"),
                      ready.get(island.id), "strictly after")
        for old in scenario.existing:
            u = status.unit(old.id)
            drained, removed = (u.drained, u.removed) if u else (None, None)
            check(f"{old.id} drain starts", node(f"{old.id} drain starts"), drained)
            check(f"{old.id} removed", node(f"{old.id} removed"), removed,
                  "strictly after" if drained is not None else "at or after")
        crew_rows = {plan.node_names[v] for v in plan.crew_node[s, :plan.n_crew_rows[s]]}
        for row in scenario.rows():
            name, r = f"row {row.id} ready for new units", status.row(row.id)
            started = r.retrofit_started if r else None
            done = r.retrofit_done if r else None
            if started is None and name not in crew_rows:
                continue                     # not retrofitted in this strategy
            begins = node(name) - q[f"row.{row.id}.retrofit"]      # a crew starts it
            check(f"row {row.id}'s retrofit starts", begins, started, slack=EXACT)
            check(f"row {row.id}'s retrofit ends", node(name), done,
                  "strictly after" if started is not None else "at or after")
        for new in scenario.incoming:
            u = status.unit(new.id)
            start = node(f"{new.id} install starts")
            check(f"{new.id} install starts", start, u and u.install_start)
            if u is not None and u.install_start is not None:
                check(f"{new.id} install ends", start + q[f"unit.{new.id}.install"],
                      u.install_end, "strictly after")
            if f"{new.id} passes burn-in" in plan.node_names:
                check(f"{new.id} passes burn-in", node(f"{new.id} passes burn-in"),
                      u and u.passed)
                attempts = q[f"unit.{new.id}.burn_in.attempts"]
                recorded = len(u.attempts) if u else 0
                if u is not None and u.passed is not None:
                    bad = attempts != recorded
                else:
                    running = bool(u and u.attempts and u.attempts[-1].end is None)
                    bad = attempts < recorded + (0 if running else 1)
                if bad.any():
                    failures.append(f"{strategy}: {new.id} needs {attempts[bad][0]:g} burn-in "
                                    f"attempts, the status records {recorded}")
            check(f"{new.id} accepted", node(f"{new.id} accepted"), u and u.accepted)
            if f"{new.id} fails early" in plan.node_names:
                out = u.failed_out if u else None
                check(f"{new.id} fails early", node(f"{new.id} fails early"), out)
                check(f"{new.id} back from repair", node(f"{new.id} back from repair"),
                      u.failed_back if u else None,
                      "strictly after" if out is not None else "at or after")
        halls = {row.id: hall.id for hall in scenario.halls for row in hall.rows}
        for u in status.units:
            if u.row is None:
                continue
            v = plan.node_names.index(f"{u.id} install starts")
            drawn = {plan.hall_names[plan.power_event_hall[s, p]]
                     for p in np.flatnonzero(plan.power_event_node == v)
                     if plan.power_event_delta[p] > 0}
            if drawn != {halls[u.row]}:
                failures.append(f"{strategy}: {u.id}, installed in row {u.row}, draws its "
                                f"power in hall(s) {sorted(drawn)}")
    for risk, impact in status.risks:
        name = f"risk.{risk}"
        if name in q and not (np.abs(q[name] - (impact or 0.0)) <= EXACT).all():
            failures.append(f"{name} is not {impact or 0:g} in every world")
    return failures


def assert_no_impossible_past(scenario, status, count=N_WORLDS, seed=5):
    plan = compile_scenario(with_facts(scenario, status))
    _, world, nodes = simulate_chunk(plan, seed, 1000, count, keep_nodes=True)
    failures = facts_failing(scenario, status, plan, world, nodes)
    assert not failures, f"{status.path} as of {status.as_of:g}:\n" + "\n".join(failures[:30])
    return plan


@pytest.mark.parametrize("risks", ["off", "pre"])
@pytest.mark.parametrize("day", [100, 150, 210])
def test_example_statuses_have_only_their_past(day, risks):
    scenario = reference() if risks == "off" else select_risks(reference(), "pre")
    status = load_status(SERIES / f"day{day}.toml", scenario)
    plan = assert_no_impossible_past(scenario, status)
    assert plan.n_strategies == len(scenario.strategies)       # every strategy checked


@pytest.mark.parametrize("as_of", STORY_DAYS)
def test_the_story_has_only_its_past(as_of):
    scenario = reference()
    if as_of > 110.0:
        scenario = dataclasses.replace(scenario, strategies=tuple(
            scenario.strategy(name) for name in STORY_STRATEGIES))
    assert_no_impossible_past(scenario, story(as_of), count=2000)


@pytest.mark.slow
def test_the_busy_day_has_only_its_past():
    # every kind of fact at once, seven strategies with costs and a job mix (about 2 s)
    assert_no_impossible_past(load_scenario(FULL), busy_day(), count=1000)


def test_the_check_sees_a_past_that_did_not_happen():
    # the same check on worlds with no status: S1 arrives before day 100 in many of them,
    # and a strategy's day-0 decisions happen before as_of
    scenario = reference()
    status = load_status(SERIES / "day100.toml", scenario)
    plan = compile_scenario(scenario)
    _, world, nodes = simulate_chunk(plan, 5, 0, 500, keep_nodes=True)
    failures = facts_failing(scenario, status, plan, world, nodes)
    assert any("shipment S1 arrives not strictly after as_of 100" in f for f in failures)
