"""A constraint broken in about 1 world in 1,000 (issue 24, item 1): the race must still find
the cheapest plan that never breaks it.

tests/data/optimize-rare.toml (its comments work the plans out): the old units drain on day
D (0, 7, 14 or 21) and the new units land in hall A's row A2 (no retrofit: cheap) or hall B's
row B1 (a 5,000 retrofit). In hall A the new units' 40 kW fit under the 45 kW cap only once
the old units' removal has ended: on day D + 1, before the shipment on day 20, except in the
worlds where a removal takes 40 to 60 days (a chance of 1 in 2,000 per unit), when the hall
goes over its cap; D = 21 goes over in every world. Hall B never goes over. So the cheapest
plans (A2, D = 0, 7, 14) break `p:power_violation <= 0` in about 1 world in 1,000, and the
cheapest plan that never breaks it is B1, D = 0.

The search races the 8 plans and the template on 500 then 2,000 worlds of seed 1, whose first
world over the cap is world 531: the first stage sees none, keeps the two cheapest (A2, D = 0
and 7) and drops the rest on the objective; the second finds both over the cap. Successive
halving alone answered "no plan found"; with re-admission the reserve's best take their
places until one stays feasible.
"""
from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.chunks import simulate
from mcrisk.core.definitions import COST, METRICS
from mcrisk.core.model import Strategy, Trigger
from mcrisk.optimize.run import run_optimize
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import DATA

SCENARIO = DATA / "optimize-rare.toml"
SEARCH = DATA / "optimize-rare-search.toml"
POWER = METRICS.index("power_violation")
DAYS, ROWS = (0.0, 7.0, 14.0, 21.0), ("A2", "B1")


def plan(day: float, row: str) -> Strategy:
    drain = Trigger(day=day)
    return Strategy(f"{row}-day{day:g}", (("N1", row), ("N2", row)),
                    (("E1", drain), ("E2", drain)))


def brute_force(samples: int, seed: int):
    """Every plan of the space and the template on the same worlds: its power violations
    per world and its mean total cost."""
    scenario = load_scenario(SCENARIO)
    strategies = tuple(plan(d, r) for d, r in itertools.product(DAYS, ROWS)) + \
        (scenario.strategy("hall-b-late"),)
    result = simulate(compile_scenario(dataclasses.replace(scenario, strategies=strategies)),
                      samples, seed, select_backend("numpy"))
    over = result.metrics[:, :, POWER] > 0
    cost = result.costs[:, :, COST["cost_total"]].mean(axis=0)
    return strategies, over, cost


def test_the_rare_violation_lies_between_the_two_stages():
    """What the search relies on, simulated without mcrisk.optimize: the cheap hall-A plans
    break the cap first in world 531 of seed 1 (after stage 1's 500, within stage 2's
    2,000), D = 21 in every world, hall B never; and B1 with D = 0 is the cheapest plan that
    never breaks it."""
    strategies, over, cost = brute_force(20_000, 1)
    names = [s.name for s in strategies]
    for day in DAYS[:3]:
        worlds = np.flatnonzero(over[:, names.index(f"A2-day{day:g}")])
        assert worlds[0] == 531 and 5 <= len(worlds) <= 40, worlds      # ~1 in 1,000
    assert over[:, names.index("A2-day21")].all()
    never = [n for k, n in enumerate(names) if not over[:, k].any()]
    assert never == ["B1-day0", "B1-day7", "B1-day14", "B1-day21", "hall-b-late"]
    assert min(never, key=lambda n: cost[names.index(n)]) == "B1-day0"
    assert cost[names.index("A2-day0")] < cost[names.index("B1-day0")] - 4_000


def test_the_race_finds_the_cheapest_plan_that_never_breaks_the_cap(tmp_path):
    started = time.perf_counter()
    found = run_optimize(SEARCH, tmp_path / "out", backend="numpy")
    seconds = time.perf_counter() - started
    document = found.document
    first, second = document["race"]["stages"]
    assert (first["candidates_in"], first["infeasible"], first["candidates_out"]) == (9, 1, 2)
    # both survivors break the cap on 2,000 worlds; A2 at day 14 is re-admitted and breaks
    # it too, B1 at day 0 and 7 stay feasible
    assert (second["candidates_in"], second["readmitted"], second["infeasible"],
            second["candidates_out"]) == (2, 3, 3, 2)
    plans = document["plans"]
    assert [p["knobs"][0]["value"] for p in plans] == ["day:0, lag 0 d", "day:0, lag 7 d"]
    assert [p["knobs"][1]["value"] for p in plans] == ["row B1", "row B1"]
    assert all(p["feasible"] for p in plans)
    assert "no plan found" not in found.strategies_toml
    assert seconds < 60, seconds


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_fully_enumerated_space_yields_its_best_feasible_plan_on_any_seed(tmp_path, seed):
    """On five race seeds, whichever stage first shows the rare violation, the search's best
    plan is the brute force's: the cheapest plan that never breaks the cap on the race's
    worlds (B1, D = 0; its cost ranks first on the fresh worlds too)."""
    search = tmp_path / SEARCH.name
    search.write_text(SEARCH.read_text().replace("seed = 1", f"seed = {seed}").replace(
        'scenario = "optimize-rare.toml"', f'scenario = "{SCENARIO}"'))
    document = run_optimize(search, backend="numpy").document
    strategies, over, cost = brute_force(2_000, seed)
    feasible = [k for k in range(len(strategies)) if not over[:, k].any()]
    best = strategies[min(feasible, key=lambda k: cost[k])]
    top = document["plans"][0]
    assert best.name == "B1-day0"
    assert [k["value"] for k in top["knobs"][:2]] == ["day:0, lag 0 d", "row B1"]
