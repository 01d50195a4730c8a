"""Retrofit crews per strategy (issue 14: "how many retrofit crews to hire" is a plan's choice):
a [[strategies]] block's optional `crews` key, read and checked like [retrofit] crews, compiled
into the plan's per-strategy n_crews and crew_rate, and honoured by every backend.

The yardstick is independent of the new key: a strategy with `crews = 2` in a scenario whose
[retrofit] has 1 crew must give, bit for bit on every backend, the metrics and costs the same
strategy gives in a scenario with [retrofit] crews = 2 (and its neighbour, without the key,
those of the scenario with 1 crew).
"""
from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pytest

from mcrisk.cli import main
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import COST, N_METRICS
from mcrisk.core.errors import ScenarioError
from mcrisk.optimize.candidates import generate, strategy_toml
from mcrisk.optimize.space import read_search
from mcrisk.scenario import load_scenario
from ..helpers import DATA

# swap-on-day retrofits R3 alone (its crew count changes only what the crews cost);
# into-rows retrofits R1 and R2, which empty on the same day: a second crew does both at once.
STRATEGIES = """
[[strategies]]
name = "swap-on-day"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 10 }]

[[strategies]]
name = "into-rows"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R2" }]
drain = [{ units = "E1..E2", day = 5 }]
"""

COSTS = """
[costs]

[[costs.power]]
hall = "H"
reserved_kw = 150
price_per_kw_month = { dist = "triangular", min = 140, mode = 150, max = 170 }

[costs.running]
old = { dist = "uniform", min = 1200, max = 2000 }

[costs.shortfall]
per_h100_eq_hour = { dist = "triangular", min = 2.0, mode = 2.35, max = 3.5 }

[costs.crews]
per_crew_day = { dist = "triangular", min = 6000, mode = 8000, max = 12000 }
"""

RETROFIT_DAYS = '{ dist = "uniform", min = 7, max = 14 }'


def with_crews(strategies: str, name: str, crews: int) -> str:
    """`strategies` with `crews = N` added to the block named `name`."""
    return strategies.replace(f'name = "{name}"\n', f'name = "{name}"\ncrews = {crews}\n')


def run(backend, path, samples: int = 96) -> np.ndarray:
    """metrics[i, s, 6 + N_COSTS] of the scenario at `path` on `backend` (seed 5)."""
    plan = compile_scenario(load_scenario(path))
    return backend.simulate_chunk(plan, 5, 0, samples)[0]


def test_a_strategy_with_its_own_crews_runs_as_the_scenario_with_those_crews(backend, tiny):
    own = run(backend, tiny(strategies=with_crews(STRATEGIES, "into-rows", 2) + COSTS, crews=1,
                            retrofit=RETROFIT_DAYS))
    two = run(backend, tiny(strategies=STRATEGIES + COSTS, crews=2, retrofit=RETROFIT_DAYS))
    one = run(backend, tiny(strategies=STRATEGIES + COSTS, crews=1, retrofit=RETROFIT_DAYS))
    assert own.shape[2] == N_METRICS + len(COST)
    np.testing.assert_array_equal(own[:, 1], two[:, 1], err_msg="into-rows, crews = 2")
    np.testing.assert_array_equal(own[:, 0], one[:, 0], err_msg="swap-on-day, default crews")
    # the crews matter here, so the comparison above can fail: one crew retrofits R1 and R2
    # one after the other, and two crews cost twice as much per day
    assert (two[:, 1, 4] < one[:, 1, 4]).all()                          # completion day
    crews = N_METRICS + COST["cost_crews"]
    assert (two[:, 0, crews] > one[:, 0, crews]).all()


def test_the_default_is_the_scenario_crews_and_the_plan_holds_each_strategys(tiny):
    scenario = load_scenario(tiny(strategies=with_crews(STRATEGIES, "into-rows", 3) + COSTS,
                                  crews=2))
    assert [s.crews for s in scenario.strategies] == [None, 3]
    plan = compile_scenario(scenario)
    assert plan.n_crews.tolist() == [2, 3]
    assert plan.crew_price_q >= 0                                        # a drawn price
    assert plan.crew_rate.tolist() == [2.0, 3.0]                         # crews x price 1.0


def test_a_plan_without_costs_has_per_strategy_crews_too(tiny):
    plan = compile_scenario(load_scenario(tiny(strategies=with_crews(STRATEGIES, "swap-on-day",
                                                                     3))))
    assert plan.n_crews.tolist() == [3, 1] and plan.crew_rate.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("value, message", [
    ("0", "strategies[1].crews = 0: must be >= 1 (the retrofit crews this strategy hires "
          "(default: [retrofit] crews))"),
    ("2.5", "strategies[1].crews = 2.5: must be a whole number (for example crews = 2)"),
    ('"2"', "strategies[1].crews = '2': must be a number, not a string (for example crews = 2)"),
    ("4", "strategies[1].crews = 4: must be <= 3 (one crew per row, 3 rows: more crews than "
          "rows never work at once)"),
])
def test_bad_crews_are_located(tiny, value, message):
    path = tiny(strategies=with_crews(STRATEGIES, "into-rows", value))
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert f"{path}: {message}" in str(error.value).splitlines()


def test_crews_without_a_retrofit_section_are_located(tiny):
    # liquid units in liquid rows need no retrofit: the only problem is the crews key
    text = tiny(strategies=with_crews(STRATEGIES, "into-rows", 2)).read_text()
    text = re.sub(r"\[retrofit\]\ncrews = 1\ndays = 10\n", "", text)
    text = text.replace('cooling = "air"', 'cooling = "liquid"')
    path = tiny()
    path.write_text(text)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(error.value).splitlines() == [
        f"{path}: strategies[1].crews = 2: the scenario has no [retrofit]: crews retrofit rows, "
        "and there is nothing that says how long a row takes (add a [retrofit] table with crews "
        "and days, or remove crews)"]



# ---- mcrisk optimize writes a plan's crews into its block --------------------------------

DATA = DATA

# The known search (tests/data/optimize-known-search.toml) with the new units in row A2 only,
# which a crew must retrofit first, and one or two crews: every plan that keeps the trough at
# zero is chosen (keep 1, top 100), so the plans with 2 crews are among them.
CREWS_SEARCH = """
[search]
scenario = "{scenario}"
template = "late-drain"
seed = 1

[[search.drain_groups]]
units = "E1..E2"
triggers = ["on_arrival:S1"]
lag_days = [14, 21]

[[search.waves]]
units = "N1..N2"
rows = ["A2"]

[search.crews]
values = [1, 2]

[search.objective]
minimize = "mean:cost_total"

[search.constraints]
"p90:trough_depth" = {{ max = 0 }}

[search.race]
scenarios = [40]
keep = 1.0

[search.evaluate]
samples = 200
top = 100
"""


@pytest.mark.slow
def test_a_plan_with_two_crews_runs_in_mcrisk_run_with_the_figures_of_optimize_json(tmp_path):
    """strategies.toml appended to the scenario as it is ([retrofit] crews = 1): `mcrisk run`
    on the fresh seed gives every plan optimize.json's figures, those with 2 crews too."""
    search = tmp_path / "search.toml"
    search.write_text(CREWS_SEARCH.format(scenario=DATA / "optimize-known.toml"))
    out = tmp_path / "out"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["optimize", str(search), "--out", str(out), "--quiet"]) == 0
    document = json.loads((out / "optimize.json").read_text())
    blocks = (out / "strategies.toml").read_text()
    plans = {plan["name"]: plan for plan in document["plans"]}
    two = [name for name, plan in plans.items() if plan["crews"] == 2]
    assert two and len(two) < len(plans)
    assert blocks.count("\ncrews = 2\n") == len(two) and "set it in the scenario" not in blocks
    scenario = tmp_path / "scenario.toml"
    scenario.write_text((DATA / "optimize-known.toml").read_text() + "\n" + blocks)
    evaluation = document["evaluation"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["run", str(scenario), "--samples", str(evaluation["samples"]), "--seed",
                     str(evaluation["seed"]), "--out", str(tmp_path / "run"), "--quiet",
                     "--no-mitigation"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["strategies"]
    for name, plan in plans.items():
        ran = summary[name]
        assert ran["trough_depth"]["p90"] == plan["statistics"]["p90:trough_depth"]["value"]
        assert ran["costs"]["cost_total"]["mean"] == \
            pytest.approx(plan["statistics"]["mean:cost_total"]["value"], rel=1e-12)
    # the crews matter: a plan with 2 crews costs more than its twin with 1 (the same row is
    # retrofitted as fast, by crews paid twice over)
    for name in two:
        twin = next(other for other, plan in plans.items() if plan["crews"] == 1
                    and plan["knobs"][:-1] == plans[name]["knobs"][:-1])
        assert summary[name]["costs"]["cost_crews"]["mean"] == \
            pytest.approx(2 * summary[twin]["costs"]["cost_crews"]["mean"], rel=1e-12)
        assert summary[name]["costs"]["cost_crews"]["mean"] > 0


def test_a_template_that_hires_its_own_crews_gives_them_to_every_plan(tmp_path):
    """Without [search.crews] the plans hire the template's crews (2 here, the scenario's 1):
    each block says so, and reads back as the candidate's strategy."""
    scenario = tmp_path / "optimize-known.toml"
    scenario.write_text((DATA / "optimize-known.toml").read_text().replace(
        'name = "late-drain"\n', 'name = "late-drain"\ncrews = 2\n'))
    search = tmp_path / "search.toml"
    text = CREWS_SEARCH.format(scenario=scenario)
    search.write_text(text.replace("[search.crews]\nvalues = [1, 2]\n", ""))
    space = read_search(search)
    assert space.crews == (2,)
    generated = generate(space)
    assert {c.crews for c in generated.candidates} == {2}
    for candidate in generated.candidates:
        block = strategy_toml(candidate, space.scenario)
        assert block.splitlines()[-1] == "crews = 2"
        copy = tmp_path / f"{candidate.name}.toml"
        copy.write_text(scenario.read_text() + "\n" + block)
        assert load_scenario(copy).strategy(candidate.name) == candidate.strategy
