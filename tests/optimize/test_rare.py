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
import html
import itertools
import json
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
    # how sure: none over the cap in the 2,000 fresh worlds bounds the share below 0.0015
    sure = plans[0]["constraints"]["p:power_violation"]
    assert (sure["verdict"], sure["scenarios"], sure["over"]) == ("met", 2_000, 0)
    assert sure["over_upper"] == pytest.approx(1 - 0.05 ** (1 / 2_000), rel=1e-9)
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


def _search_file(tmp_path, **edits) -> str:
    """The rare search with `edits` (old text -> new text) applied, in tmp_path."""
    text = SEARCH.read_text().replace('scenario = "optimize-rare.toml"',
                                      f'scenario = "{SCENARIO}"')
    for old, new in edits.values():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / SEARCH.name
    path.write_text(text)
    return path


def test_a_plan_that_breaks_a_constraint_on_the_fresh_worlds_is_never_presented_as_found(
        tmp_path, capsys):
    """Raced on 200 then 400 worlds of seed 1 (none over the cap: the first is world 531),
    the three cheap hall-A plans look feasible and are chosen; the fresh seed's 2,000 worlds
    show them over the cap. They once were ranked 1-3, called better than hall-b-late and
    written first in strategies.toml (issue 24, item 2). They are set aside now, and the
    race's next plans, evaluated on the same fresh worlds, take their places."""
    from mcrisk.cli import main

    search = _search_file(tmp_path, stages=("scenarios = [500, 2000]", "scenarios = [200, 400]"),
                          keep=("keep = 0.25", "keep = 1"))
    out = tmp_path / "out"
    assert main(["optimize", str(search), "--out", str(out), "--backend", "numpy",
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    document = json.loads((out / "optimize.json").read_text())
    assert [s["infeasible"] for s in document["race"]["stages"]] == [1, 0]   # only day 21
    aside = document["set_aside"]
    assert [p["knobs"][1]["value"] for p in aside] == ["row A2"] * 3
    assert all(p["constraints"]["p:power_violation"]["verdict"] == "violated" for p in aside)
    assert all("rank" not in p and "strategy_toml" not in p for p in aside)
    plans = document["plans"]
    assert [p["rank"] for p in plans] == [1, 2, 3] and all(p["feasible"] for p in plans)
    assert [p["knobs"][1]["value"] for p in plans] == ["row B1"] * 3
    assert plans[0]["knobs"][0]["value"] == "day:0, lag 0 d"
    assert document["evaluation"]["replacements"] == 3
    blocks = (out / "strategies.toml").read_text()
    assert all(f'name = "{p["name"]}"' not in blocks for p in aside)
    assert [line for line in blocks.splitlines() if line.startswith("name = ")] == \
        [f'name = "{p["name"]}"' for p in plans]
    names = ", ".join(p["name"] for p in aside)
    assert f"Set aside: {names} broke a constraint on the fresh scenarios (P(power over cap))" \
        in text
    for plan in aside:                       # no row of the table: never ranked or compared
        assert not [line for line in text.splitlines() if line.split()[1:2] == [plan["name"]]]
    page = (out / "report.html").read_text()
    assert "Set aside: chosen by the race, broke a constraint on the fresh scenarios" in page


def test_fewer_plans_than_top_says_so(tmp_path):
    """The race's last stage keeps only the plans that survived to it: here 2 of the 5
    asked; the terminal, the page and strategies.toml say so, and why (issue 24, item 7)."""
    from mcrisk.cli.optimize_text import format_optimize
    from mcrisk.report.html.optimize import render_optimize_report

    search = _search_file(tmp_path, top=("top = 3", "top = 5"))
    found = run_optimize(search, backend="numpy")
    assert len(found.document["plans"]) == 2
    line = "Fewer plans than asked: 2 found of top = 5 (the race's last stage kept 2 candidates"
    assert line in format_optimize(found.document)
    assert line in html.unescape(render_optimize_report(found.document))
    assert f"# {line}" in found.strategies_toml
