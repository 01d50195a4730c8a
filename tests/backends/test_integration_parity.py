"""Install teams and burn-in bays against a slow, obvious simulation (issue 28, 2), and backend
parity on plans with them.

The slow check is an event-by-event simulation in plain Python, written from the rule in
docs/scenario-format.md (Semantics, Install teams and burn-in bays) and nothing of the plan's
crew rows: each pool (a hall's own teams or bays, else the site's: the strategy's own, else
[integration]'s; none: unlimited) keeps a count of free members and a queue of waiting units
ordered by (ready time, file order); at each event time, units finishing free their member
first, then every pool starts its waiting units while a member is free. It reads only the
drawn durations (arrivals, installs, burn-ins) from the world, by name, and must give every
unit's install start and burn-in pass exactly as the NumPy reference does, on a few hundred
random small scenarios (two halls, a hall energized late, units with and without burn-in,
burn-in failures, fixes and RMAs, pools per hall and for the site, strategies hiring their
own).

Parity: the random scenarios and scenarios/install-capacity.toml give the same world, node
times and metrics on every backend (tests/parity.py's table), the host build of the CUDA
sources bit for bit with Numba.
"""
from __future__ import annotations

import heapq
import random
from functools import cache

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity

numpy_backend = select_backend("numpy")
N_RANDOM = 240
SAMPLES = 6


def random_case(seed: int) -> dict:
    """A random small scenario's description: halls, pools, units, shipments, strategies."""
    rng = random.Random(seed)
    def count():
        return rng.choice([None, None, 1, 1, 2, 3])

    halls = [{"id": "H1", "energized": 0.0, "teams": count(), "bays": count()},
             {"id": "H2", "energized": rng.choice([0.0, 12.0]), "teams": count(),
              "bays": count()}]
    units = [{"id": f"N{k}", "burn_in": rng.random() < 0.8} for k in range(1, rng.randint(2, 7))]
    n_ships = rng.randint(1, min(3, len(units)))
    ship_of = {u["id"]: f"S{1 + min(k, n_ships - 1)}" for k, u in enumerate(units)}
    ships = [{"id": f"S{k}", "day": float(rng.choice([0, 5, 10])),
              "units": [u for u, s in ship_of.items() if s == f"S{k}"]}
             for k in range(1, n_ships + 1)]
    strategies = []
    for k in range(rng.randint(1, 2)):
        strategies.append({"name": f"plan-{k}", "teams": rng.choice([None, None, 1, 2]),
                           "bays": rng.choice([None, None, 1, 2]),
                           "hall": {u["id"]: rng.choice(["H1", "H2"]) for u in units}})
    return {"halls": halls, "site": {"teams": count(), "bays": count()}, "units": units,
            "ships": [s for s in ships if s["units"]], "strategies": strategies,
            "fail": rng.choice([0.0, 0.3, 0.6])}


def case_toml(case: dict) -> str:
    def keys(pool: dict) -> str:
        return "".join(f"{key} = {pool[short]}\n" for key, short in
                       (("install_teams", "teams"), ("burn_in_bays", "bays"))
                       if pool[short] is not None)

    n = len(case["units"])
    text = f"""[scenario]
name = "random-integration"
horizon_days = 400

[demand]
points = [[0, 10]]
largest_job = 10

[[unit_types]]
id = "burned"
gpus = 72
h100_eq_per_gpu = 2.5
power_kw = 135
cooling = "liquid"
island = "ib"
install_days = {{ dist = "uniform", min = 1, max = 6 }}

[unit_types.burn_in]
attempt_days = {{ dist = "triangular", min = 2, mode = 3, max = 7 }}
fail_first = {case["fail"]}
fail_retry = 0.2
fix_days = {{ dist = "uniform", min = 1, max = 3 }}
rma_after_failures = 2
rma_days = {{ dist = "uniform", min = 10, max = 20 }}

[[unit_types]]
id = "plain"
gpus = 72
h100_eq_per_gpu = 2.5
power_kw = 135
cooling = "liquid"
island = "ib"
install_days = {{ dist = "uniform", min = 1, max = 6 }}

[[islands]]
id = "ib"
"""
    for hall in case["halls"]:
        text += (f'\n[[halls]]\nid = "{hall["id"]}"\npower_cap_kw = 100000\n'
                 f'energized = {{ day = {hall["energized"]} }}\n{keys(hall)}'
                 f'rows = [{{ id = "{hall["id"]}-L", cooling = "liquid", positions = {n} }}]\n')
    if any(v is not None for v in case["site"].values()):
        text += f"\n[integration]\n{keys(case['site'])}"
    for unit in case["units"]:
        text += (f'\n[[incoming]]\nunits = "{unit["id"]}"\n'
                 f'type = "{"burned" if unit["burn_in"] else "plain"}"\n')
    for ship in case["ships"]:
        units = ", ".join(f'"{u}"' for u in ship["units"])
        text += (f'\n[[shipments]]\nid = "{ship["id"]}"\nunits = [{units}]\n'
                 f'arrival = {{ day = {ship["day"]}, delay = {{ dist = "uniform", min = 0, '
                 'max = 8 } }\n')
    for strategy in case["strategies"]:
        places = ", ".join(f'{{ units = "{u}", row = "{h}-L" }}'
                           for u, h in strategy["hall"].items())
        text += (f'\n[[strategies]]\nname = "{strategy["name"]}"\n{keys(strategy)}'
                 f"place = [{places}]\ndrain = []\n")
    return text


def slow_schedule(case: dict, strategy: dict, values, index: dict) -> dict:
    """{unit: (install start, burn-in passed)} by an event-by-event simulation of the rule.
    values(index[name]) is the world's value of quantity `name` in this scenario."""
    def draw(name: str) -> float:
        return values(index[name])

    halls = {h["id"]: h for h in case["halls"]}
    site = {key: strategy[key] if strategy[key] is not None else case["site"][key]
            for key in ("teams", "bays")}
    order = {u["id"]: k for k, u in enumerate(case["units"])}
    burns = {u["id"]: u["burn_in"] for u in case["units"]}
    ship_of = {u: s["id"] for s in case["ships"] for u in s["units"]}

    def pool(unit: str, key: str):
        """(pool name, size): the hall's own, else the site's; size None: unlimited."""
        hall = halls[strategy["hall"][unit]]
        if hall[key] is not None:
            return (key, hall["id"]), hall[key]
        return (key, "site"), site[key]

    free, queues = {}, {}
    events = []                          # (time, kind, unit): kind 0 frees, 1 makes ready
    for unit, k in order.items():
        ready = max(draw(f"shipment.{ship_of[unit]}.arrival"),
                    halls[strategy["hall"][unit]]["energized"])
        heapq.heappush(events, (ready, 1, k, unit, "teams"))
    start, passed = {}, {}
    while events:
        now = events[0][0]
        while events and events[0][0] == now:       # every event at this time
            _, kind, _, unit, key = heapq.heappop(events)
            name, size = pool(unit, key)
            if kind == 0:                            # a unit finished: its member is free
                free[name] += 1
                if key == "teams":                   # installed: now ready for a bay
                    if burns[unit]:
                        heapq.heappush(events, (now, 1, order[unit], unit, "bays"))
                    else:                            # no burn-in: no bay, passes when installed
                        passed[unit] = now
                else:
                    passed[unit] = now
            else:                                    # ready: joins its pool's queue
                free.setdefault(name, size if size is not None else len(order))
                heapq.heappush(queues.setdefault(name, []), (now, order[unit], unit, key))
        for name, queue in queues.items():           # start waiting units on free members
            while queue and free[name] > 0:
                _, _, unit, key = heapq.heappop(queue)
                free[name] -= 1
                if key == "teams":
                    start[unit] = now
                    done = now + draw(f"unit.{unit}.install")
                else:
                    done = now + draw(f"unit.{unit}.burn_in")
                heapq.heappush(events, (done, 0, order[unit], unit, key))
    return {unit: (start[unit], passed[unit]) for unit in order}


@cache
def random_plan(seed: int):
    case = random_case(seed)
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"random-{seed}.toml"
        path.write_text(case_toml(case))
        return case, compile_scenario(load_scenario(path))


def test_the_reference_schedules_as_the_slow_simulation():
    compared = waited = 0
    for seed in range(N_RANDOM):
        case, plan = random_plan(seed)
        _, world, times = numpy_backend.simulate_chunk(plan, seed, 0, SAMPLES, keep_nodes=True)
        q = {name: k for k, name in enumerate(plan.quantity_names)}
        for s, strategy in enumerate(case["strategies"]):
            for i in range(SAMPLES):
                slow = slow_schedule(case, strategy, world[i].__getitem__, q)
                for unit, (start, passed) in slow.items():
                    got = (times[i, s, plan.node_names.index(f"{unit} install starts")],
                           times[i, s, plan.node_names.index(f"{unit} passes burn-in")])
                    assert got == (start, passed), (seed, strategy["name"], i, unit,
                                                    case_toml(case))
                    compared += 1
                    arrival = world[i, q[f"shipment.{_ship(case, unit)}.arrival"]]
                    waited += start > max(arrival, _energized(case, strategy, unit))
    assert compared > 1000 and waited > 100           # the pools did make units wait


def _ship(case: dict, unit: str) -> str:
    return next(s["id"] for s in case["ships"] if unit in s["units"])


def _energized(case: dict, strategy: dict, unit: str) -> float:
    return next(h["energized"] for h in case["halls"] if h["id"] == strategy["hall"][unit])


# ---- parity --------------------------------------------------------------------------------

@cache
def capacity_plan():
    return compile_scenario(load_scenario(SCENARIOS / "install-capacity.toml"))


PARITY_SEEDS = (0, 1, 2, 3, 5, 8, 13, 21)


@pytest.mark.parametrize("seed", PARITY_SEEDS)
def test_random_plans_match_the_reference(backend, seed):
    plan = random_plan(seed)[1]
    got = backend.simulate_chunk(plan, 7, 100, 64, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 7, 100, 64, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


def test_the_capacity_scenario_matches_the_reference(backend):
    plan = capacity_plan()
    got = backend.simulate_chunk(plan, 11, 3000, 48, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 11, 3000, 48, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
def test_host_build_is_bit_identical_to_numba_with_teams_and_bays(host):
    plans = [capacity_plan()] + [random_plan(seed)[1] for seed in range(40)]
    for k, plan in enumerate(plans):
        got = host.simulate_chunk(plan, 21, 77, 300, keep_nodes=True)
        expected = numba_chunk(plan, 21, 77, 300, keep_nodes=True)
        for name, a, b in zip(("metrics", "world", "node times"), got, expected):
            np.testing.assert_array_equal(a, b, err_msg=f"plan {k}: {name}")


# ---- with a status ---------------------------------------------------------------------------

@cache
def busy_capacity_plan():
    """install-capacity.toml at day 220 of tests/statuses.py's busy day (hall B's racks in
    every state: four installs recorded as started at once, more than its two teams)."""
    from mcrisk.core.facts import with_facts

    from ..statuses import busy_day
    return compile_scenario(with_facts(load_scenario(SCENARIOS / "install-capacity.toml"),
                                       busy_day()))


def test_a_status_keeps_its_facts_and_queues_what_remains():
    """Recorded installs and burn-in starts keep their days (they hold no team or bay:
    docs/scenario-format.md); what the status has not recorded waits for a team (a bay) from
    the status date on, and the backends agree."""
    plan = busy_capacity_plan()
    _, _, times = numpy_backend.simulate_chunk(plan, 5, 0, 200, keep_nodes=True)
    hybrid = plan.strategy_names.index("hybrid-gated")

    def at(name: str) -> np.ndarray:
        return times[:, hybrid, plan.node_names.index(name)]

    for name, day in (("N01 install starts", 150.0), ("N05 install starts", 214.0),
                      ("N06 burn-in starts", 219.0), ("N08 burn-in starts", 215.0)):
        np.testing.assert_array_equal(at(name), day, err_msg=name)
    # N05, installing at day 220, is the first rack whose burn-in the status does not record:
    # the racks in burn-in by then (N03, N06, N07, N08) hold no bay, so it waits for none
    np.testing.assert_array_equal(at("N05 burn-in starts"), at("N05 installed"))
    assert (at("N05 installed") >= 220.0).all()
    later = np.sort(np.stack([at(f"N{u:02d} install starts") for u in range(9, 13)]), axis=0)
    # two teams: the third of N09..N12 to start waits for one of the first two to finish
    firsts = np.stack([at(f"N{u:02d} installed") for u in range(9, 13)])
    assert (later >= 220.0).all() and (later[2] >= np.sort(firsts, axis=0)[0]).all()


def test_the_conditioned_capacity_plan_matches_the_reference(backend):
    plan = busy_capacity_plan()
    got = backend.simulate_chunk(plan, 4, 10, 48, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 4, 10, 48, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)
