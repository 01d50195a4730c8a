"""The metrics' and costs' window [window_start, horizon) (issue 25): by hand on every backend,
the host build bit for bit with Numba, and window_start 0 exactly today's numbers.

The tiny migration of tests/conftest.py has fixed durations, so each window's numbers are
worked out by hand. swap-on-day: capacity 256 on [0, 10), 0 on [10, 27) (both old units drain
on day 10, the racks are accepted on day 27), 360 from day 27; the old units are removed on
day 15 (their 100 kW each freed), the racks' installs start on day 20. swap-gated: capacity 256
until day 27, when the racks are accepted and the old units drain; removed on day 32.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.core.definitions import COST, DAYS_PER_MONTH, HOURS_PER_DAY, METRICS, N_METRICS
from mcrisk.core.status import Status
from mcrisk.plan.compile import compile_scenario
from mcrisk.plan.window import history_plan, window_start, with_window
from mcrisk.scenario import load_scenario

from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity
from ..random_scenarios import random_scenario_text
from ..slow_costs import Span, random_costs, slow_costs, with_costs

M = {name: k for k, name in enumerate(METRICS)}
numpy_backend = select_backend("numpy")


def at(plan, start: float):
    return with_window(plan, start)


def status(as_of: float) -> Status:
    return Status(path="status.toml", sha256="0" * 64, as_of=as_of)


def test_window_start_is_zero_without_a_status_and_as_of_held_to_the_horizon(tiny):
    plan = compile_scenario(load_scenario(tiny()))
    assert plan.window_start == 0.0
    assert with_window(plan, None) is plan          # nothing changes without a status
    assert with_window(plan, status(15.0)).window_start == 15.0
    assert window_start(None, 100.0) == 0.0
    assert window_start(150.0, 100.0) == 100.0 and window_start(-3.0, 100.0) == 0.0
    past = history_plan(plan, status(15.0))
    assert (past.window_start, past.horizon) == (0.0, 15.0)


# swap-on-day's capacity is 0 on [10, 27): every metric of the trough, clipped to the window
@pytest.mark.parametrize("start", [0.0, 5.0, 10.0, 15.0, 26.5, 27.0, 30.0, 100.0])
def test_capacity_metrics_count_only_the_window(tiny, backend, start):
    plan = at(compile_scenario(load_scenario(tiny())), start)
    metrics = backend.simulate_chunk(plan, 1, 0, 2)[0]
    days = max(0.0, 27.0 - max(start, 10.0))
    on_day, gated = metrics[:, 0], metrics[:, 1]
    assert (on_day[:, M["trough_depth"]] == (256.0 if days > 0 else 0.0)).all()
    assert (on_day[:, M["trough_days"]] == days).all()
    assert (on_day[:, M["shortfall_gpu_days"]] == 256.0 * days).all()
    assert (on_day[:, M["homeless_days"]] == days).all()
    assert (on_day[:, M["completion_day"]] == 27.0).all()       # a day of the plan, not cut
    assert (gated[:, :M["homeless_days"] + 1] == 0.0).all()
    assert (gated[:, M["completion_day"]] == 32.0).all()


def test_a_dip_before_the_window_counts_in_no_metric_but_the_baseline_stays_day_0s(tiny, backend):
    # demand 300 above the baseline 256: shortfall 44 a day before the drains, 300 during the
    # trough, 0 once 360 are in service; from day 20 only [20, 27) of the trough is left
    plan = at(compile_scenario(load_scenario(tiny(demand="[[0, 300]]"))), 20.0)
    on_day = backend.simulate_chunk(plan, 1, 0, 1)[0][0, 0]
    assert plan.baseline == 256.0
    assert on_day[M["trough_depth"]] == 256.0 and on_day[M["trough_days"]] == 7.0
    assert on_day[M["shortfall_gpu_days"]] == 300.0 * 7
    whole = backend.simulate_chunk(at(plan, 0.0), 1, 0, 1)[0][0, 0]
    assert whole[M["shortfall_gpu_days"]] == 44.0 * 10 + 300.0 * 17


# Power: hall H draws 200 kW until the old units' removal (day 15 on-day, 32 gated), the new
# racks 2 x 50 kW from day 20; cap 150: over on [0, 15) on-day, on [0, 32) gated.
@pytest.mark.parametrize("start, on_day, gated", [
    (0.0, 1.0, 1.0), (14.9, 1.0, 1.0), (15.0, 0.0, 1.0), (31.9, 0.0, 1.0), (32.0, 0.0, 0.0),
    (100.0, 0.0, 0.0)])
def test_power_counts_the_draw_in_force_at_the_window_start_and_after(tiny, backend, start,
                                                                      on_day, gated):
    plan = at(compile_scenario(load_scenario(tiny(new_kw=50, cap_kw=150))), start)
    power = backend.simulate_chunk(plan, 1, 0, 1)[0][0, :, M["power_violation"]]
    assert power.tolist() == [on_day, gated]


def test_power_after_the_horizon_still_counts(tiny, backend):
    # the racks arrive on day 120, after the 100-day horizon: 200 + 2 x 100 kW over a cap of
    # 300 from day 120 on (the gated strategy keeps the old units until acceptance)
    plan = at(compile_scenario(load_scenario(tiny(arrival=120, cap_kw=300))), 50.0)
    power = backend.simulate_chunk(plan, 1, 0, 1)[0][0, :, M["power_violation"]]
    assert power.tolist() == [0.0, 1.0]


# ---- costs ----------------------------------------------------------------------------------

PER_KW_MONTH, OVER_PER_KW_MONTH = 150.0, 300.0
PER_KWH, PUE, LOAD = 0.08, 1.5, 0.8
RUNNING, WAITING = 1500.0, 3000.0
PER_H100_EQ_HOUR, PER_CREW_DAY, MITIGATION = 2.35, 8000.0, 250_000.0
ENERGY = LOAD * PUE * HOURS_PER_DAY * PER_KWH       # per kW-day


def priced(plan):
    """The tiny migration priced with every kind of cost (constant prices): reserved 150 kW
    from day 0 and 50 kW from day 12, energy, the old fleet to its removal, the racks from
    arrival to acceptance, power over the reservation, shortfall, one crew, a mitigation."""
    n_s = plan.n_strategies
    spans = [Span("cost_power_reserved", 0.0, 12.0, (150 / DAYS_PER_MONTH * PER_KW_MONTH,) * n_s),
             Span("cost_power_reserved", 12.0, math.inf,
                  (50 / DAYS_PER_MONTH * PER_KW_MONTH,) * n_s),
             Span("cost_energy", 0.0, math.inf, (200.0 * ENERGY,) * n_s)]
    spans += [Span("cost_energy", node, math.inf, (kw * ENERGY,) * n_s)
              for node, kw in (("E1 removed", -100.0), ("E2 removed", -100.0),
                               ("N1 install starts", 100.0), ("N2 install starts", 100.0))]
    spans += [Span("cost_old_fleet", 0.0, f"{u} removed", (RUNNING,) * n_s) for u in ("E1", "E2")]
    spans += [Span("cost_new_waiting", "shipment S1 arrives", f"{u} accepted", (WAITING,) * n_s)
              for u in ("N1", "N2")]
    return with_costs(plan, spans, {(s, 0): [(0.0, 150.0), (12.0, 50.0)] for s in range(n_s)},
                      over={0: (OVER_PER_KW_MONTH / DAYS_PER_MONTH, -1)},
                      shortfall=(HOURS_PER_DAY * PER_H100_EQ_HOUR, -1),
                      crews=(PER_CREW_DAY, -1), lumps=[("cost_mitigation", MITIGATION, -1)])


def by_hand_from_day_12() -> dict:
    """swap-on-day's costs over [12, 100]: draw 200 kW on [12, 15), 0 on [15, 20), 200 on
    [20, 100); 50 kW reserved throughout; the old units run 12-15, the racks wait 20-27; no
    capacity on [12, 27) against demand 256; the crew retrofits R3 on [0, 10), before the
    window; the mitigation's one-off has no date and counts in full."""
    costs = dict(
        cost_power_reserved=50 * 88 / DAYS_PER_MONTH * PER_KW_MONTH,
        cost_power_over=(150 * 3 + 0 * 5 + 150 * 80) / DAYS_PER_MONTH * OVER_PER_KW_MONTH,
        cost_energy=(200 * 3 + 0 * 5 + 200 * 80) * ENERGY,
        cost_old_fleet=2 * 3 * RUNNING,
        cost_new_waiting=2 * 7 * WAITING,
        cost_shortfall=256 * 15 * HOURS_PER_DAY * PER_H100_EQ_HOUR,
        cost_crews=0.0,
        cost_mitigation=MITIGATION)
    costs["cost_total"] = math.fsum(costs.values())
    return costs


def test_every_cost_counts_only_the_window_by_hand(tiny, backend):
    plan = at(priced(compile_scenario(load_scenario(tiny()))), 12.0)
    row = backend.simulate_chunk(plan, 1, 0, 1)[0][0, 0]
    for column, want in by_hand_from_day_12().items():
        assert row[N_METRICS + COST[column]] == pytest.approx(want, rel=1e-12), column


def test_history_and_future_costs_add_up_to_the_whole(tiny, backend):
    # [0, 12) and [12, 100) cut the whole window: trough days, shortfall, homeless days and
    # every dated cost add up (the one-off is counted once, with the future)
    plan = priced(compile_scenario(load_scenario(tiny())))
    whole = backend.simulate_chunk(plan, 1, 0, 1)[0][0]
    future = backend.simulate_chunk(at(plan, 12.0), 1, 0, 1)[0][0]
    past = backend.simulate_chunk(history_plan(plan, status(12.0)), 1, 0, 1)[0][0]
    additive = [M["trough_days"], M["shortfall_gpu_days"], M["homeless_days"],
                *range(N_METRICS, whole.shape[1])]
    np.testing.assert_allclose((past + future)[:, additive], whole[:, additive], rtol=1e-12,
                               atol=1e-6)
    assert past[0, M["trough_days"]] == 2.0 and future[0, M["trough_days"]] == 15.0
    assert (past[:, N_METRICS + COST["cost_mitigation"]] == 0.0).all()


# ---- the job mix ----------------------------------------------------------------------------

JOBS_HAND = """
[scenario]
name = "jobs-window"
horizon_days = 100

[demand]
points = [[0, 150]]
packing_step_days = 10

[[demand.jobs]]
id = "big"
size = 100
share = 0.5

[[demand.jobs]]
id = "small"
size = 30
share = 0.5

[[unit_types]]
id = "old-a"
gpus = 100
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "a"

[[unit_types]]
id = "old-b"
gpus = 100
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "b"

[[islands]]
id = "a"

[[islands]]
id = "b"

[[halls]]
id = "H"
power_cap_kw = 1000
rows = [{ id = "R1", cooling = "air", positions = 2 },
        { id = "R2", cooling = "air", positions = 2 },
        { id = "R3", cooling = "air", positions = 2 }]

[[existing]]
units = "E1"
type = "old-a"
rows = "R1"

[[existing]]
units = "E2"
type = "old-b"
rows = "R2"

[[incoming]]
units = "N1"
type = "old-a"

[[shipments]]
id = "S1"
units = "N1"
arrival = { day = 1000 }

[[strategies]]
name = "drain-b-day-10"
place = [{ units = "N1", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N1" }, { units = "E2", day = 10 }]
"""


@pytest.mark.parametrize("start, cells", [(0.0, 9), (20.0, 8), (25.0, 7.5), (5.0, 9.5)])
def test_job_columns_count_only_the_window(tmp_path, backend, start, cells):
    # From day 10 (E2 drains) big (100, 75 of demand 150) goes into a, and the 25 left there
    # holds no 30-job: 25 a day unservable; the cells of 10 days start at the window's start
    # (from day 5 the change falls at the cell [5, 15)'s midpoint 10: counted from it, the
    # midpoint rule of docs/metrics.md); a 150-job has no home anywhere, a 100-job always one
    path = tmp_path / "jobs.toml"
    path.write_text(JOBS_HAND)
    plan = at(compile_scenario(load_scenario(path)), start)
    row = backend.simulate_chunk(plan, 1, 0, 1)[0][0, 0]
    first = N_METRICS + plan.n_costs
    assert row[first] == 25 * 10 * cells
    assert row[first + 1:].tolist() == [0.0, 0.0]       # homeless: big never, small never
    assert row[M["trough_days"]] == 100.0 - max(start, 10.0)


# ---- backends against each other, window_start 0 against today -------------------------------

@pytest.mark.parametrize("case", range(8))
def test_a_window_matches_the_reference_on_random_scenarios(backend, tmp_path, case):
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    plan = random_costs(compile_scenario(load_scenario(path)), case)
    plan = at(plan, [0.0, 0.31, 0.5, 0.77][case % 4] * plan.horizon)
    got = backend.simulate_chunk(plan, case, 100 * case, 150, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, case, 100 * case, 150, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("case", range(10))
def test_host_build_is_bit_identical_to_numba_with_a_window(host, tmp_path, case):
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    plan = random_costs(compile_scenario(load_scenario(path)), case)
    plan = at(plan, (0.1 + 0.08 * case) * plan.horizon)
    got = host.simulate_chunk(plan, case, 7, 200, keep_nodes=True)
    expected = numba_chunk(plan, case, 7, 200, keep_nodes=True)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


def test_window_start_0_is_today_bit_for_bit(reference_plan):
    # the compiled plan's window_start is 0: a plan whose window is set to 0 explicitly gives
    # the numbers of the plan as compiled (and tests/backends/test_full_scenario.py holds those
    # to the golden file of earlier versions)
    import dataclasses
    explicit = dataclasses.replace(reference_plan, window_start=0.0)
    np.testing.assert_array_equal(numba_chunk(explicit, 1, 0, 500)[0],
                                  numba_chunk(reference_plan, 1, 0, 500)[0])


def test_slow_costs_agree_with_the_reference_in_a_window(tmp_path):
    for case in range(4):
        path = tmp_path / f"random-{case}.toml"
        path.write_text(random_scenario_text(case))
        plan = random_costs(compile_scenario(load_scenario(path)), 3 + case)
        plan = at(plan, 0.4 * plan.horizon)
        metrics, world, nodes = numpy_backend.simulate_chunk(plan, 2, 0, 20, keep_nodes=True)
        for i in range(20):
            for s in range(plan.n_strategies):
                want, scale = slow_costs(plan, s, nodes[i, s], world[i],
                                         metrics[i, s, M["shortfall_gpu_days"]])
                got = metrics[i, s, N_METRICS:]
                assert np.all(np.abs(got - want) <= 1e-9 * np.maximum(scale, 1.0)), (case, i, s)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
def test_a_drawn_job_mix_in_a_window_is_bit_identical_on_every_cpu_backend(host, tmp_path):
    # N1's arrival drawn (E1 drains on its acceptance), a forecast's growth drawn, a packing
    # step that does not divide the window: the three CPU backends to the bit
    path = tmp_path / "jobs.toml"
    path.write_text(JOBS_HAND.replace(
        "arrival = { day = 1000 }",
        'arrival = { day = 30, delay = { dist = "uniform", min = 0, max = 50 } }').replace(
        "points = [[0, 150]]\npacking_step_days = 10",
        'forecast = { workload_at_day0 = 150, growth_per_year = { dist = "uniform", min = 0, '
        'max = 3 }, points_every_days = 30 }\npacking_step_days = 3.3'))
    plan = at(compile_scenario(load_scenario(path)), 33.3)
    reference = numpy_backend.simulate_chunk(plan, 5, 3, 150)[0]
    assert np.ptp(reference[:, 0, N_METRICS], axis=0) > 0       # unservable varies
    for chunk in (numba_chunk, host.simulate_chunk):
        np.testing.assert_array_equal(chunk(plan, 5, 3, 150)[0], reference)
