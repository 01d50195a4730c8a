"""Contingent strategies (issue 28, section 1): each world follows the branch its decision
takes, judged on what is known on the decision day, on every backend.

The tiny scenario is scenarios/minimal.toml with one more written plan, `swap-late` (the
racks in R3, the pods drained on day 40 whatever happens), and a contingent strategy that
follows `swap-gated` (pods drained once both racks are accepted) when shipment S1 has arrived
by day 35, else `swap-late`. S1's arrival is one drawn quantity per world
(`shipment.S1.arrival`, kept in the run's world), so the branch each world takes is known
without the code under test: arrival <= 35. The checks are against that direct calculation,
the branches' own rows (the mixture: the contingent row is, world by world, one branch's row),
the limits (a decision always met, never met) and a plan that anticipates (refused).
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.chunks import simulate
from mcrisk.backends.contingency import AnticipationError
from mcrisk.backends.cuda_host import host_compiler
from mcrisk.core.definitions import N_METRICS
from mcrisk.plan.compile import compile_scenario

from ..helpers import MINIMAL_TEXT, load_text, problems, variant

SWAP_LATE = """
[[strategies]]
name = "swap-late"
description = "Both racks go into R3; the pods drain on day 40 whatever happens"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 40 }]
"""
CONTINGENT = """
[[strategies]]
name = "contingent"
decision = { day = DAY, arrived = "S1", met = "swap-gated", unmet = "swap-late" }
"""
MET, _, UNMET, ROW = 0, 1, 2, 3       # swap-gated, drain-on-day, swap-late, contingent
BACKENDS = ["numpy", "numba"] + (["cuda-host"] if host_compiler() else [])
SAMPLES = 400


def tiny(day: float = 35, text: str = "") -> str:
    return MINIMAL_TEXT + SWAP_LATE + CONTINGENT.replace("DAY", f"{day:g}") + text


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(text: str, backend: str = "numba", samples: int = SAMPLES, chunk_size: int = 65_536):
    plan = compile_scenario(load_text(text))
    return plan, simulate(plan, samples, 7, select_backend(backend), chunk_size=chunk_size)


@pytest.mark.parametrize("backend", BACKENDS)
def test_branch_follows_the_drawn_arrival(here, backend):
    """met exactly where the drawn arrival is at or before day 35; the contingent row is the
    met branch's row there and the unmet branch's row elsewhere, every column (costs none
    here) bit for bit; both branches are taken in this sample (the check can fail)."""
    plan, result = run(tiny(), backend)
    arrival = result.world[:, plan.quantity_names.index("shipment.S1.arrival")]
    met = arrival <= 35.0
    assert 0.2 < met.mean() < 0.9
    np.testing.assert_array_equal(result.branches[:, 0], met)
    expected = np.where(met[:, None], result.metrics[:, MET], result.metrics[:, UNMET])
    np.testing.assert_array_equal(result.metrics[:, ROW], expected)
    # the branches differ where it matters (else the check above could not fail)
    assert (result.metrics[met, MET] != result.metrics[met, UNMET]).any()
    assert (result.metrics[~met, MET] != result.metrics[~met, UNMET]).any()


def test_mixture_of_the_branches(here):
    """Rejection-style: the contingent strategy's distribution, restricted to the worlds where
    the condition holds (computed from the drawn arrival), is the met branch's restricted
    to them, and elsewhere the unmet branch's; the whole is their mixture."""
    plan, result = run(tiny(), samples=2_000)
    met = result.world[:, plan.quantity_names.index("shipment.S1.arrival")] <= 35.0
    for m in range(N_METRICS):
        contingent = result.metrics[:, ROW, m]
        np.testing.assert_array_equal(np.sort(contingent[met]),
                                      np.sort(result.metrics[met, MET, m]))
        np.testing.assert_array_equal(np.sort(contingent[~met]),
                                      np.sort(result.metrics[~met, UNMET, m]))
        mixture = np.concatenate([result.metrics[met, MET, m], result.metrics[~met, UNMET, m]])
        np.testing.assert_array_equal(np.sort(contingent), np.sort(mixture))


@pytest.mark.parametrize("day, branch", [(1_000, MET), (0, UNMET)])
def test_always_and_never_met(here, day, branch):
    """A decision always met (day 1000: S1 has arrived) is its met branch exactly, one never
    met (day 0: S1 arrives after day 30) its unmet branch."""
    _, result = run(tiny(day))
    assert result.branches[:, 0].all() == (branch == MET)
    assert (~result.branches[:, 0]).all() == (branch == UNMET)
    np.testing.assert_array_equal(result.metrics[:, ROW], result.metrics[:, branch])


def test_backends_agree(here):
    """The contingent rows and branches are the same on every backend (the gather is one
    NumPy step after each kernel; the kernels agree to tests/parity.py's table: bit for bit
    here, where minimal draws no lognormal, PERT or table)."""
    results = [run(tiny(), b)[1] for b in BACKENDS]
    for other in results[1:]:
        np.testing.assert_array_equal(other.branches, results[0].branches)
        np.testing.assert_array_equal(other.metrics, results[0].metrics)


def test_any_chunk_size(here):
    """Every draw is addressed by scenario: the branches and rows do not depend on the
    chunk size."""
    _, whole = run(tiny())
    _, chunked = run(tiny(), chunk_size=7)
    np.testing.assert_array_equal(whole.branches, chunked.branches)
    np.testing.assert_array_equal(whole.metrics, chunked.metrics)


def test_node_times_are_the_chosen_branch(here):
    """The contingent row's node times (milestones, bands) are the chosen branch's."""
    plan, _ = run(tiny())
    backend = select_backend("numpy")
    _, world, nodes = backend.simulate_chunk(plan, 7, 0, 200, keep_nodes=True)
    met = world[:, plan.quantity_names.index("shipment.S1.arrival")] <= 35.0
    np.testing.assert_array_equal(nodes[:, ROW], np.where(met[:, None], nodes[:, MET],
                                                          nodes[:, UNMET]))
    assert backend.simulate_chunk(plan, 7, 0, 5)[2] is None   # not kept unless asked


def test_anticipating_plan_is_refused(here):
    """drain-on-day drains the pods on day 30, before S1's arrival can be known (day >= 30,
    decision day 35): a plan choosing between it and swap-gated anticipates, and the run
    says which strategy, branch, node and day."""
    text = tiny(text="").replace('unmet = "swap-late"', 'unmet = "drain-on-day"')
    with pytest.raises(AnticipationError) as info:
        run(text)
    message = str(info.value)
    assert "strategy 'contingent'" in message
    assert "'swap-gated' (met) and 'drain-on-day' (unmet)" in message
    assert "node 'E1 drain starts' is at day" in message
    assert "the decision day is 35" in message


def test_count_of_events(here):
    """at_least counts events: both racks accepted by day 38 (two events, at_least 2) against
    a direct count of the branch rows' acceptance node times. (Day 38: swap-late drains on
    day 40, after the decision; a decision day after 40 is refused, as the last
    test's plan is.)"""
    text = tiny(38).replace('arrived = "S1"', 'accepted = "N1..N2", at_least = 2')
    plan, result = run(text)
    backend = select_backend("numba")
    _, _, nodes = backend.simulate_chunk(plan, 7, 0, SAMPLES, keep_nodes=True)
    accepted = [plan.node_names.index(f"{u} accepted") for u in ("N1", "N2")]
    # the racks are accepted in R3 in either branch: the acceptances are the same in both
    met = (nodes[:, UNMET, accepted] <= 38.0).sum(axis=1) >= 2
    assert 0.05 < met.mean() < 0.95
    np.testing.assert_array_equal(result.branches[:, 0], met)


@pytest.mark.parametrize("edit, expected", [
    (('met = "swap-gated"', 'met = "swap-gatd"'),
     "strategies[3].decision.met = 'swap-gatd': unknown strategy (did you mean 'swap-gated'?)"),
    (('unmet = "swap-late"', 'unmet = "swap-gated"'),
     "strategies[3].decision.unmet = 'swap-gated': is the same strategy as met"),
    (('arrived = "S1", ', ""), "strategies[3].decision = "),
    (('arrived = "S1"', 'arrived = "S9"'),
     "strategies[3].decision.arrived = 'S9': unknown shipment"),
    (('arrived = "S1"', 'arrived = "S1", at_least = 2'),
     "strategies[3].decision.at_least = 2: must be <= 1"),
    (('name = "contingent"', 'name = "contingent"\nplace = []'),
     "strategies[3].place = []: a contingent strategy takes its plan from its branches"),
    (('decision = { day = 35', 'decision = { dya = 35'), "strategies[3].decision.dya"),
    (('decision = { day = 35', 'decision = { day = 35, on_arrival = "S1"'),
     "strategies[3].decision.on_arrival = 'S1': is given with day: a decision has one moment"),
    (('decision = { day = 35, ', 'decision = { '),
     "strategies[3].decision: needs its moment: day, on_arrival or on_accepted"),
    (('decision = { day = 35', 'decision = { on_accepted = "N7"'),
     "strategies[3].decision.on_accepted = 'N7': unknown incoming unit"),
])
def test_bad_decisions_are_located(here, edit, expected):
    found = problems(variant(edit, text=tiny()))
    assert any(expected in p for p in found), found


def test_branch_may_not_be_contingent(here):
    text = tiny() + CONTINGENT.replace("contingent", "twice").replace(
        "DAY", "35").replace('met = "swap-gated"', 'met = "contingent"')
    found = problems(text)
    assert any("strategies[4].decision.met = 'contingent': is a contingent strategy itself"
               in p for p in found), found


def test_decided_once_known(here):
    """A met condition is known when its event happens, before the decision day: S1 arrives
    by day 40 in every world, so with a decision day of 45 both branches may act from the
    arrival on (swap-gated drains on acceptance, swap-late on day 40, both before day 45)
    and the plan is not refused. Judged on the decision day alone, it would be."""
    plan, result = run(tiny(45))
    arrival = result.world[:, plan.quantity_names.index("shipment.S1.arrival")]
    assert arrival.max() <= 40.0 and result.branches.all()
    drain = select_backend("numba").simulate_chunk(plan, 7, 0, SAMPLES, keep_nodes=True)[2][
        :, :, plan.node_names.index("E1 drain starts")]
    assert (drain[:, MET] < 45).mean() > 0.5 and (drain[:, UNMET] == 40).all()


def test_on_dask_workers(here):
    """On Dask workers the branches are taken there (each worker's Backend.simulate_chunk),
    with the same rows and branches as in process."""
    pytest.importorskip("distributed")
    from mcrisk.backends.dask import dask_session

    plan, alone = run(tiny(), "numpy", samples=300)
    with dask_session("local:1") as session:
        remote = simulate(plan, 300, 7, session.backend("numpy", plan), chunk_size=64)
    np.testing.assert_array_equal(remote.metrics, alone.metrics)
    np.testing.assert_array_equal(remote.branches, alone.branches)


def test_memory_counts_the_node_times(here):
    """A run without hooks still computes node times for a contingent plan: the memory
    check counts them (a chunk's, every strategy's) and the kept branches."""
    import dataclasses

    from mcrisk.backends.chunks import memory_needed

    plan = compile_scenario(load_text(tiny()))
    plain = dataclasses.replace(plan, contingencies=())
    chunk = samples = 65_536        # the simulation, not the analysis, sets the peak here
    extra = (memory_needed(plan, samples, chunk, keep_nodes=False)
             - memory_needed(plain, samples, chunk, keep_nodes=False))
    assert extra >= chunk * plan.n_strategies * plan.n_nodes * 8 + samples


@pytest.mark.parametrize("count", [40, 3_000])     # the NumPy path and the compiled one
def test_hall_peaks_follow_the_branch(here, count):
    """The capacity bands' hall peak draws of a contingent row are, world by world, those of
    the branch taken (hall-b-or-rows' branches put S3's racks in hall B or in hall A), by
    the NumPy specification (hall_peak_draw) on each branch's own row; the contingent row's
    own placement (its met branch's) would put them in the wrong hall in unmet worlds."""
    from mcrisk.results.bands import BandCollector, hall_peak_draw

    from ..helpers import SCENARIOS

    plan = compile_scenario(load_text((SCENARIOS / "contingent.toml").read_text()))
    row = plan.strategy_names.index("hall-b-or-rows")
    c = next(c for c in plan.contingencies if c.row == row)
    _, _, nodes = select_backend("numba").simulate_chunk(plan, 1, 0, count, keep_nodes=True)
    met = c.met(nodes)
    assert 0 < met.sum() < count
    expected = np.where(met[:, None], hall_peak_draw(plan, c.met_row, nodes[:, c.met_row]),
                        hall_peak_draw(plan, c.unmet_row, nodes[:, c.unmet_row]))
    got = BandCollector(plan)._peak(row, np.ascontiguousarray(nodes), count >= 1_000)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    naive = hall_peak_draw(plan, row, nodes[:, row])
    assert not np.allclose(naive[~met], expected[~met])


def test_decided_on_an_event(here):
    """A decision taken when N1 is accepted, by whether N2 is accepted by then (world by
    world, against a direct reading of the two acceptances): swap-gated if so, else a plan
    that drains the pods 5 days after N1's acceptance. (swap-late, which drains on day 40,
    would act before N1's acceptance in most worlds: refused.)"""
    text = tiny().replace('decision = { day = 35, arrived = "S1"',
                          'decision = { on_accepted = "N1", accepted = "N2"').replace(
        '[{ units = "E1..E2", day = 40 }]', '[{ units = "E1..E2", on_accepted = "N1", '
        'lag_days = 5 }]')
    plan, result = run(text)
    c = plan.contingencies[0]
    _, _, nodes = select_backend("numba").simulate_chunk(plan, 7, 0, SAMPLES, keep_nodes=True)
    n1, n2 = (plan.node_names.index(f"{u} accepted") for u in ("N1", "N2"))
    assert c.on_node == n1
    met = nodes[:, UNMET, n2] <= nodes[:, UNMET, n1]      # N2 accepted by N1's acceptance
    assert 0.1 < met.mean() < 0.95      # ties: both accepted once the island is ready
    np.testing.assert_array_equal(result.branches[:, 0], met)
    np.testing.assert_array_equal(result.metrics[:, ROW], np.where(
        met[:, None], result.metrics[:, MET], result.metrics[:, UNMET]))
    with pytest.raises(AnticipationError, match="a drain on the event: N1 accepted"):
        run(tiny().replace('decision = { day = 35, arrived = "S1"',
                           'decision = { on_accepted = "N1", accepted = "N2"'))
