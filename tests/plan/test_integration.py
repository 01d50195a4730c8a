"""Install teams and burn-in bays (issue 28, 2): `[integration]`, a hall's and a strategy's
`install_teams` and `burn_in_bays`, read and checked like crews, compiled into crew rows of
their own pools (mcrisk/plan/integration.py) and honoured by every backend.

The yardsticks are independent of the code: a closed form on four racks arriving together
(one team, two bays: installs end at d, 2d, 3d, 4d and burn-ins follow by hand), and plans
that must give the same numbers as a plan without the keys (capacities no wait can reach) or
as another spelling of the same capacities (a strategy's own teams against [integration]'s).
The event-by-event check on random scenarios is tests/backends/test_integration_parity.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.core.errors import ScenarioError
from mcrisk.optimize.candidates import _strategy_block
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

INSTALL, ATTEMPT = 3.0, 5.0     # days: fixed install and (passing) burn-in attempt


def racks_toml(*, hall: str = "", site: str = "", strategy: str = "", units: int = 4,
               burn_in: str = "", arrival: str = "{ day = 10 }", rows: int = 1,
               second_strategy: str = "") -> str:
    """`units` liquid racks arriving together into hall H's liquid rows (no retrofit, no wait
    for a row), install INSTALL days, burn-in one ATTEMPT (fail_first 0 unless `burn_in`
    replaces the table's body); keys added to the hall, [integration] and the strategy."""
    burn_in = burn_in or (f"attempt_days = {ATTEMPT}\nfail_first = 0.0\nfail_retry = 0.0\n"
                          "fix_days = 1\nrma_after_failures = 1\nrma_days = 1")
    row_tables = ", ".join(f'{{ id = "L{k}", cooling = "liquid", positions = {units} }}'
                           for k in range(1, rows + 1))
    places = ", ".join(f'{{ units = "N{u}", row = "L{1 + (u - 1) % rows}" }}'
                       for u in range(1, units + 1))
    return f"""
[scenario]
name = "racks"
horizon_days = 200

[demand]
points = [[0, 64]]
largest_job = 64

[[unit_types]]
id = "old"
gpus = 64
h100_eq_per_gpu = 1.0
power_kw = 80
cooling = "air"
island = "ib"
drain_days = 1
removal_days = 1

[[unit_types]]
id = "new"
gpus = 72
h100_eq_per_gpu = 2.5
power_kw = 135
cooling = "liquid"
island = "ib"
install_days = {INSTALL}

[unit_types.burn_in]
{burn_in}

[[islands]]
id = "ib"

[[halls]]
id = "H"
power_cap_kw = 50000
{hall}
rows = [{row_tables}, {{ id = "A1", cooling = "air", positions = 1 }}]

{"[integration]" if site else ""}
{site}

[[existing]]
units = "E1"
type = "old"
rows = "A1"

[[incoming]]
units = "N1..N{units}"
type = "new"

[[shipments]]
id = "S1"
units = "N1..N{units}"
arrival = {arrival}

[[strategies]]
name = "together"
{strategy}
place = [{places}]
drain = [{{ units = "E1", on_accepted = "N1..N{units}" }}]
{second_strategy}
"""


@pytest.fixture
def racks(tmp_path):
    counter = iter(range(10_000))

    def make(**keys):
        path = tmp_path / f"racks-{next(counter)}.toml"
        path.write_text(racks_toml(**keys))
        return path

    return make


def node_times(backend, path, samples: int = 8, seed: int = 3):
    plan = compile_scenario(load_scenario(path))
    metrics, _, times = backend.simulate_chunk(plan, seed, 0, samples, keep_nodes=True)
    return plan, metrics, times


def column(plan, times, name: str, s: int = 0) -> np.ndarray:
    return times[:, s, plan.node_names.index(name)]


# ---- the closed form: 4 racks together, 1 team, 2 bays ----------------------------------

@pytest.mark.parametrize("bays, passes", [
    # installs end at 13, 16, 19, 22 (day 10 + 3, 6, 9, 12); each burn-in takes 5 days
    (2, [18.0, 21.0, 24.0, 27.0]),        # N3 waits for N1's bay (free at 18), N4 for N2's
    (1, [18.0, 23.0, 28.0, 33.0]),        # one bay: back to back from 13
    (None, [18.0, 21.0, 24.0, 27.0]),     # unlimited: each 5 days after its install
])
def test_four_racks_one_team_known_answer(backend, racks, bays, passes):
    hall = "install_teams = 1" + (f"\nburn_in_bays = {bays}" if bays else "")
    plan, _, times = node_times(backend, racks(hall=hall))
    starts = [column(plan, times, f"N{u} install starts") for u in range(1, 5)]
    passed = [column(plan, times, f"N{u} passes burn-in") for u in range(1, 5)]
    for u in range(4):
        np.testing.assert_array_equal(starts[u], 10.0 + INSTALL * u, err_msg=f"N{u + 1} start")
        np.testing.assert_array_equal(passed[u], passes[u], err_msg=f"N{u + 1} passes")


def test_two_bays_with_failures_hold_the_bay_until_the_rack_passes(racks):
    """Two bays, installs unlimited (all end at 13), every first attempt fails and is fixed
    on site: a burn-in is attempt + fix + attempt = 5 + 2 + 5 = 12 days, and the bay is held
    through the fix, so N3 and N4 start at 25 and pass at 37."""
    burn_in = ("attempt_days = 5\nfail_first = 1.0\nfail_retry = 0.0\nfix_days = 2\n"
               "rma_after_failures = 2\nrma_days = 30")
    plan, _, times = node_times(select("numpy"), racks(hall="burn_in_bays = 2",
                                                       burn_in=burn_in))
    for u, (start, passes) in enumerate([(13, 25), (13, 25), (25, 37), (25, 37)], 1):
        np.testing.assert_array_equal(column(plan, times, f"N{u} burn-in starts"), start)
        np.testing.assert_array_equal(column(plan, times, f"N{u} passes burn-in"), passes)


def select(name: str):
    from mcrisk.backends import select_backend
    return select_backend(name)


# ---- without a wait, the numbers of the plan without the keys ---------------------------

def test_capacities_no_wait_reaches_give_the_numbers_without_the_keys(backend, racks):
    """As many teams and bays as racks: no unit ever waits, so every metric is bit for bit
    that of the scenario without the keys (whose plan has no bay nodes at all); with one team
    the completion is later, so the comparison can fail."""
    arrival = '{ day = 10, delay = { dist = "triangular", min = 0, mode = 3, max = 9 } }'
    without = node_times(backend, racks(arrival=arrival), samples=64)[1]
    roomy = node_times(backend, racks(arrival=arrival, hall="install_teams = 4\n"
                                      "burn_in_bays = 4"), samples=64)[1]
    tight = node_times(backend, racks(arrival=arrival, site="install_teams = 1"),
                       samples=64)[1]
    np.testing.assert_array_equal(roomy, without)
    assert (tight[:, 0, 4] > without[:, 0, 4]).all()                   # completion day


def test_a_strategy_hiring_its_own_teams_runs_as_the_scenario_with_them(racks):
    """`install_teams = 1` on a strategy in a scenario whose [integration] has 3 gives the
    numbers of the scenario with [integration] install_teams = 1; its neighbour keeps 3."""
    second = ('[[strategies]]\nname = "other"\nplace = [{ units = "N1..N4", row = "L1" }]\n'
              'drain = [{ units = "E1", day = 0 }]\n')
    numpy = select("numpy")
    own = node_times(numpy, racks(site="install_teams = 3\nburn_in_bays = 2",
                                  strategy="install_teams = 1", second_strategy=second))[2]
    one = node_times(numpy, racks(site="install_teams = 1\nburn_in_bays = 2",
                                  second_strategy=second))[2]
    three = node_times(numpy, racks(site="install_teams = 3\nburn_in_bays = 2",
                                    second_strategy=second))[2]
    np.testing.assert_array_equal(own[:, 0], one[:, 0])
    np.testing.assert_array_equal(own[:, 1], three[:, 1])
    assert not np.array_equal(one[:, 0], three[:, 0])


def test_a_halls_own_teams_are_not_the_sites(racks):
    """The hall's own team (1) serves its racks; the site's 4 teams are for other halls."""
    numpy = select("numpy")
    plan, _, times = node_times(numpy, racks(hall="install_teams = 1",
                                             site="install_teams = 4"))
    starts = [column(plan, times, f"N{u} install starts")[0] for u in range(1, 5)]
    assert starts == [10.0, 13.0, 16.0, 19.0]
    assert plan.n_slots.tolist() == [1 + 1]             # one retrofit crew, the hall's team


def test_the_plan_holds_each_strategys_pools(racks):
    plan = compile_scenario(load_scenario(racks(hall="burn_in_bays = 3",
                                                site="install_teams = 2")))
    install = plan.node_names.index("N2 install starts")
    bay = plan.node_names.index("N2 burn-in starts")
    assert (plan.crew_first[0, install], plan.crew_count[0, install]) == (1, 2)
    assert (plan.crew_first[0, bay], plan.crew_count[0, bay]) == (3, 3)
    assert plan.crew_hold_q[0, install] == plan.quantity_names.index("unit.N2.install")
    assert plan.crew_hold_q[0, bay] == plan.quantity_names.index("unit.N2.burn_in")
    assert plan.n_slots.tolist() == [6] and plan.n_retrofit_rows.tolist() == [0]
    assert plan.n_crew_rows.tolist() == [8]


def test_no_key_no_new_node(racks):
    plan = compile_scenario(load_scenario(racks(hall="install_teams = 2")))
    assert not any("burn-in starts" in name for name in plan.node_names)


# ---- reading -------------------------------------------------------------------------------

@pytest.mark.parametrize("where, value, message", [
    ("hall", "0", ("halls[0].install_teams = 0: must be >= 1 (the hall's own install teams: "
                   "units installed at the same time)")),
    ("site", "2.5", ("integration.install_teams = 2.5: must be a whole number (for example "
                     "install_teams = 2)")),
    ("strategy", '"2"', ("strategies[0].install_teams = '2': must be a number, not a string "
                         "(for example install_teams = 2)")),
])
def test_bad_teams_are_located(racks, where, value, message):
    path = racks(**{where: f"install_teams = {value}"})
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert f"{path}: {message}" in str(error.value).splitlines()


def test_bad_bays_and_unknown_keys_are_located(racks):
    path = racks(site="burn_in_bay = 2", hall="burn_in_bays = -1")
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    lines = str(error.value).splitlines()
    assert any(line.startswith(f"{path}: halls[0].burn_in_bays = -1: must be >= 1")
               for line in lines), lines
    assert any(line.startswith(f"{path}: integration.burn_in_bay = 2: unknown key (did you "
                               "mean 'burn_in_bays'?)") for line in lines), lines


def test_the_keys_reach_the_model(racks):
    scenario = load_scenario(racks(hall="install_teams = 2", site="burn_in_bays = 5",
                                   strategy="install_teams = 3"))
    assert (scenario.halls[0].install_teams, scenario.halls[0].burn_in_bays) == (2, None)
    assert (scenario.integration.install_teams, scenario.integration.burn_in_bays) == (None, 5)
    strategy = scenario.strategies[0]
    assert (strategy.install_teams, strategy.burn_in_bays) == (3, None)
    written = _strategy_block(strategy)              # mcrisk optimize writes them back
    assert "install_teams = 3\n" in written and "burn_in_bays" not in written


# ---- [costs.integration] --------------------------------------------------------------------

COSTS = """
[costs]

[costs.integration]
per_team_day = 1000
per_bay_day = { dist = "uniform", min = 400, max = 600 }
"""


def test_teams_and_bays_are_paid_as_crews_known_answer(backend, racks):
    """One team engaged from the first install's start (10) to the last one's end (22), two
    bays from the first burn-in's start (13) to the last one's pass (27): cost_crews =
    12 x 1 x 1000 + 14 x 2 x the drawn bay price, in every scenario, on every backend."""
    from mcrisk.core.definitions import COST, N_METRICS
    path = racks(hall="install_teams = 1\nburn_in_bays = 2")
    path.write_text(path.read_text() + COSTS)
    plan, metrics, _ = node_times(backend, path, samples=16)
    world = backend.simulate_chunk(plan, 3, 0, 16, keep_nodes=True)[1]
    bay_price = world[:, plan.quantity_names.index("cost.integration.per_bay_day")]
    assert ((bay_price >= 400) & (bay_price <= 600)).all()
    expected = 12.0 * 1000.0 + (2.0 * bay_price) * 14.0
    np.testing.assert_allclose(metrics[:, 0, N_METRICS + COST["cost_crews"]], expected,
                               rtol=1e-15)
    np.testing.assert_array_equal(metrics[:, 0, N_METRICS + COST["cost_total"]],
                                  metrics[:, 0, N_METRICS + COST["cost_crews"]])
