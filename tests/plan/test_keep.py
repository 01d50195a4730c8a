"""Keeping part of the old fleet (issue 15, part 4): `[[strategies]] keep = [...]` names
existing units the strategy never drains, so their capacity, power and running cost stay to
the horizon and the migration completes without them.

Checked against hand calculations on the tiny scenario (tests/conftest.py's TINY: two old
units E1, E2 of 128 H100-eq and 100 kW, two new racks of 180 H100-eq and 100 kW accepted on
day 27, a 100-day horizon), against the validation's located messages, across backends on
the reference with a keeping strategy, and against the same strategies without a keeping
neighbour (the one node compile adds changes no other strategy's numbers).
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.backends import numba as numba_backend
from mcrisk.backends import numpy as numpy_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import COST, METRICS, N_METRICS
from mcrisk.scenario import load_scenario

from ..conftest import TINY, TINY_DEFAULTS
from ..helpers import REFERENCE_TEXT, problems
from ..parity import assert_parity

SWAP = """
[[strategies]]
name = "swap-on-day"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 10 }]
"""

KEEP_E2 = """
[[strategies]]
name = "keep-E2"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1", day = 10 }]
keep = ["E2"]
"""

# energy at 0.1 per kWh (load factor and PUE 1): 2.4 per kW-day; the old fleet 1,000 per
# unit-day; a reservation priced at 1 per kW-month (the same for both strategies)
COSTS = """
[costs]

[[costs.power]]
hall = "H"
reserved_kw = 1000
price_per_kw_month = 1
energy_per_kwh = 0.1

[costs.running]
old = 1000
"""


def tiny_text(strategies: str, **values) -> str:
    return TINY.format(**{**TINY_DEFAULTS, **values, "strategies": strategies})


def metric(metrics: np.ndarray, s: int, name: str) -> np.ndarray:
    return metrics[:, s, METRICS.index(name)]


def cost(metrics: np.ndarray, s: int, name: str) -> np.ndarray:
    return metrics[:, s, N_METRICS + COST[name]]


def test_keeping_a_unit_halves_the_trough_and_adds_its_running_and_power(backend, tmp_path):
    # By hand: E1 (and in swap-on-day E2) drain on day 10 and are removed on day 15 (drain 2 +
    # removal 3 days); row R3 is retrofitted days 0-10; the racks arrive on day 20, install
    # 2 days and burn in 5: accepted on day 27 (island ready day 18). Demand 256 = baseline.
    path = tmp_path / "keep.toml"
    path.write_text(tiny_text(SWAP + KEEP_E2 + COSTS, cap_kw=250))
    metrics = backend.simulate_chunk(compile_scenario(load_scenario(path)), 5, 0, 8)[0]
    swap, keep = 0, 1
    # swap-on-day: nothing in service on days 10-27
    assert (metric(metrics, swap, "trough_depth") == 256).all()
    assert (metric(metrics, swap, "trough_days") == 17).all()
    assert (metric(metrics, swap, "shortfall_gpu_days") == 256 * 17).all()
    # keep-E2: E2's 128 H100-eq stay: half the depth and the shortfall, the same days
    assert (metric(metrics, keep, "trough_depth") == 128).all()
    assert (metric(metrics, keep, "trough_days") == 17).all()
    assert (metric(metrics, keep, "shortfall_gpu_days") == 128 * 17).all()
    # completion: the racks' acceptance (day 27); the kept unit is not waited for
    assert (metric(metrics, swap, "completion_day") == 27).all()
    assert (metric(metrics, keep, "completion_day") == 27).all()
    # hall H (cap 250 kW): E2's 100 kW and both racks' 200 kW from day 20 pass the cap
    assert (metric(metrics, swap, "power_violation") == 0).all()
    assert (metric(metrics, keep, "power_violation") == 1).all()
    # running: 2 units x 15 days against 15 + 100 days (E2 to the horizon), at 1,000 a day
    assert (cost(metrics, swap, "cost_old_fleet") == 30_000).all()
    assert (cost(metrics, keep, "cost_old_fleet") == 115_000).all()
    # energy: 200 kW on days 0-15 and 20-100 (19,000 kW-days) against E2's 100 kW more on
    # days 15-100 (27,500 kW-days), at 2.4 a kW-day
    np.testing.assert_allclose(cost(metrics, swap, "cost_energy"), 19_000 * 2.4, rtol=1e-12)
    np.testing.assert_allclose(cost(metrics, keep, "cost_energy"), 27_500 * 2.4, rtol=1e-12)
    np.testing.assert_array_equal(cost(metrics, swap, "cost_power_reserved"),
                                  cost(metrics, keep, "cost_power_reserved"))


def test_the_migration_completes_without_the_kept_unit(tmp_path):
    # E2 drained on day 50 would be removed on day 55, after the racks' acceptance (27)
    late = SWAP.replace('drain = [{ units = "E1..E2", day = 10 }]',
                        'drain = [{ units = "E1", day = 10 }, { units = "E2", day = 50 }]')
    path = tmp_path / "late.toml"
    path.write_text(tiny_text(late + KEEP_E2))
    metrics = numba_backend.simulate_chunk(compile_scenario(load_scenario(path)), 1, 0, 4)[0]
    assert (metric(metrics, 0, "completion_day") == 55).all()
    assert (metric(metrics, 1, "completion_day") == 27).all()


def test_a_scenario_without_keep_compiles_as_before(reference_plan):
    assert not any("leaves the migration" in name for name in reference_plan.node_names)


# ---- across backends, and the other strategies untouched ------------------------------------

HYBRID_KEEP = """
[[strategies]]
name = "hybrid-keeps-SU7-SU8"
description = "hybrid-gated, with SU7 and SU8 kept as an inference pool"
place = [
  { units = "N01..N12", row = "B1" },
  { units = "N13..N14", row = "A1" },
  { units = "N15..N16", row = "A2" },
]
drain = [
  { units = "SU3..SU4", on_accepted = "N01..N04" },
  { units = "SU5..SU6", on_accepted = "N05..N08" },
  { units = "SU1..SU2", on_accepted = "N01..N12" },
]
keep = ["SU7..SU8"]
"""


@pytest.fixture(scope="module")
def keep_plan(tmp_path_factory):
    path = tmp_path_factory.mktemp("keep") / "reference-keep.toml"
    path.write_text(REFERENCE_TEXT + HYBRID_KEEP)
    return compile_scenario(load_scenario(path))


def test_numba_matches_numpy_with_a_kept_unit(keep_plan):
    assert_parity(numba_backend.simulate_chunk(keep_plan, 11, 1000, 300, keep_nodes=True),
                  numpy_backend.simulate_chunk(keep_plan, 11, 1000, 300, keep_nodes=True),
                  ("numba", "numpy"), keep_plan)


def test_cuda_host_matches_numba_with_a_kept_unit(host, keep_plan):
    assert_parity(host.simulate_chunk(keep_plan, 3, 0, 1000, keep_nodes=True),
                  numba_backend.simulate_chunk(keep_plan, 3, 0, 1000, keep_nodes=True),
                  ("cuda-host", "numba"), keep_plan)


def test_a_keeping_strategy_changes_no_other_strategys_numbers(keep_plan, reference_plan):
    kept = numba_backend.simulate_chunk(keep_plan, 7, 0, 2000)[0]
    alone = numba_backend.simulate_chunk(reference_plan, 7, 0, 2000)[0]
    np.testing.assert_array_equal(kept[:, :-1], alone)
    # the same drains but SU7 and SU8's, which it never drains: capacity at least
    # hybrid-gated's at every moment, so no deeper trough, no more shortfall, no later end
    gated = keep_plan.strategy_names.index("hybrid-gated")
    for name in ("trough_depth", "shortfall_gpu_days", "completion_day"):
        assert (metric(kept, -1, name) <= metric(kept, gated, name)).all(), name
    assert (metric(kept, -1, "shortfall_gpu_days") < metric(kept, gated, "shortfall_gpu_days")
            ).any()


# ---- validation ----------------------------------------------------------------------------

@pytest.mark.usefixtures("in_tmp")
@pytest.mark.parametrize("keep, place, expected", [
    ('["E9"]', "R3", "x.toml: strategies[1].keep = 'E9': unknown unit"),
    ('["N1"]', "R3", "x.toml: strategies[1].keep = 'N1': N1 is an incoming unit; keep takes "
                     "existing units (place incoming units)"),
    ('["E1"]', "R3", "x.toml: strategies[1].keep = 'E1': E1 is both kept and drained in strategy "
                     "'keep-E2' (at strategies[1].drain[0].units) (keep E1 or drain it, not both)"),
    ('["E2"]', "R2", "x.toml: strategies[1].place[0].row = 'R2': row R2 holds E2, which strategy "
                     "'keep-E2' keeps: the row is never emptied for new units (place them in "
                     "another row, or drain E2 instead of keeping)"),
    ("3", "R3", "x.toml: strategies[1].keep = 3: must be an id or an array of ids"),
])
def test_bad_keep_is_reported_where_it_is(keep, place, expected):
    block = KEEP_E2.replace('keep = ["E2"]', f"keep = {keep}").replace('row = "R3"',
                                                                       f'row = "{place}"')
    found = problems(tiny_text(SWAP + block))
    assert any(p.startswith(expected) for p in found), found


@pytest.mark.usefixtures("in_tmp")
def test_a_unit_neither_drained_nor_kept_is_reported_with_both_fixes():
    block = KEEP_E2.replace('keep = ["E2"]\n', "")
    assert problems(tiny_text(SWAP + block)) == [
        "x.toml: strategies[1].drain: E2 is never drained in strategy 'keep-E2' "
        '(add { units = "E2", day = ... } to drain, or keep = ["E2"] to keep it in service)']


# ---- what the report says ------------------------------------------------------------------

@pytest.mark.usefixtures("in_tmp")
def test_the_report_says_what_a_strategy_keeps():
    from mcrisk.report.findings.sentences import kept_units
    from mcrisk.report.html.tables import strategies_table
    from ..helpers import load_text
    scenario = load_text(tiny_text(SWAP + KEEP_E2))
    swap, keep = scenario.strategies
    assert kept_units(scenario, swap) == ""
    assert kept_units(scenario, keep) == (
        "keep-E2 keeps E2 in service to day 100, never drained: +128 H100-eq in island old-ib "
        "(nominal) stay in its capacity and 100 kW in hall H in its draw, with their running "
        "and power costs where [costs] prices them; its completion day does not wait for them.")
    table = strategies_table(scenario.strategies, {"swap-on-day": "#000", "keep-E2": "#111"})
    assert "Keeps E2 in service (never drained)." in table
    assert table.count("Keeps") == 1


@pytest.mark.usefixtures("in_tmp")
def test_a_written_strategy_block_keeps_its_kept_units():
    # mcrisk optimize writes candidates as [[strategies]] blocks: one made from a keeping
    # template must keep the same units, or it would not load (a unit never drained)
    from mcrisk.optimize.candidates import _strategy_block
    from ..helpers import load_text
    keep = load_text(tiny_text(SWAP + KEEP_E2)).strategies[1]
    block = _strategy_block(keep)
    assert 'keep = "E2"' in block
    assert load_text(tiny_text(SWAP + block)).strategies[1] == keep
